/**
 * The requests a server is answering, for a stopping server to name the ones it cuts off
 * (the gateway's outer step, headers.ts, adds and removes them).
 */
/** A request being answered, for a stopping server to name the ones it cuts off. */
export interface InFlight {
  req_id: string;
  method: string;
  path: string;
  started: number;
}

/**
 * The requests being answered, for a stopping server to name the ones it cuts off. A request
 * takes a free slot of an array and gives it back: no hashing of its fresh id and no map growing
 * and shrinking with every request, as a Map keyed by id did (issue #33).
 */
export class InFlightTable {
  private slots: Array<InFlight | undefined> = [];
  private free: number[] = [];

  /** Holds `r` until `remove(r)`: its slot is kept on it. */
  add(r: InFlight & { slot: number }): void {
    const i = this.free.pop();
    if (i === undefined) r.slot = this.slots.push(r) - 1;
    else this.slots[(r.slot = i)] = r;
  }

  /** Lets `r` go (again: nothing). */
  remove(r: InFlight & { slot: number }): void {
    const i = r.slot;
    if (i < 0 || this.slots[i] !== r) return;
    this.slots[i] = undefined;
    r.slot = -1;
    this.free.push(i);
  }

  /** The requests held, oldest first. */
  list(): InFlight[] {
    return this.slots.filter((r): r is InFlight => r !== undefined).sort((a, b) => a.started - b.started);
  }
}
