/**
 * The browser's page slots (QUARRY_BROWSER_PAGES), shared fairly between accounts (#28 item 3).
 * With one first-come queue, eight renders of a page that spins for ever held every slot until
 * their deadlines, and another account's ordinary render timed out waiting behind them.
 *
 * Two rules:
 * - An account holds at most `perAccount` slots at once (by default all but a quarter, at least
 *   one kept back), so one account alone never takes them all: another account's render finds a
 *   slot at once, or the next one freed.
 * - When a slot frees, it goes to the waiting account holding the fewest slots; between equals, to
 *   the one served longest ago (round robin); within an account, its requests keep their order.
 */

/** Slots one account may hold out of `size`: all but a quarter of them (at least one kept back when there are two or more). */
export function defaultShare(size: number): number {
  return size <= 1 ? 1 : size - Math.max(1, Math.floor(size / 4));
}

interface Waiter {
  grant: () => void;
}

export interface SlotStats {
  inUse: number;
  waiting: number;
  /** Slots held now, by account. */
  held: Record<string, number>;
}

export class FairSlots {
  private inUse = 0;
  private readonly held = new Map<string, number>();
  /** Waiting requests by account. */
  private readonly queues = new Map<string, Waiter[]>();
  /** When each account was last given a slot (a counter, not a clock). */
  private readonly servedAt = new Map<string, number>();
  private turn = 0;
  readonly perAccount: number;

  constructor(readonly size: number, perAccount?: number) {
    this.perAccount = Math.max(1, Math.min(size, perAccount ?? defaultShare(size)));
  }

  stats(): SlotStats {
    let waiting = 0;
    for (const q of this.queues.values()) waiting += q.length;
    return { inUse: this.inUse, waiting, held: Object.fromEntries(this.held) };
  }

  /**
   * A slot for `account`, once the rules above give it one; rejects with the signal's reason if
   * it aborts first. The returned function gives the slot back (once; later calls do nothing).
   */
  take(account: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    // Slots free and this account under its share: any request still waiting is held back by its
    // own account's share, so taking the slot passes no one.
    if (this.inUse < this.size && this.heldBy(account) < this.perAccount) return Promise.resolve(this.give(account));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener("abort", leave);
          resolve(this.give(account));
        },
      };
      const leave = () => {
        const queue = this.queues.get(account);
        const at = queue?.indexOf(waiter) ?? -1;
        if (at >= 0) queue!.splice(at, 1);
        if (queue && !queue.length) this.queues.delete(account);
        reject(signal.reason);
      };
      const queue = this.queues.get(account);
      if (queue) queue.push(waiter);
      else this.queues.set(account, [waiter]);
      signal.addEventListener("abort", leave, { once: true });
    });
  }

  private heldBy(account: string): number {
    return this.held.get(account) ?? 0;
  }

  private give(account: string): () => void {
    this.inUse++;
    this.held.set(account, this.heldBy(account) + 1);
    this.servedAt.set(account, ++this.turn);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.inUse--;
      const left = this.heldBy(account) - 1;
      if (left > 0) this.held.set(account, left);
      else this.held.delete(account);
      this.pump();
    };
  }

  /** Hands free slots to waiting accounts: the fewest held first, then the one served longest ago. */
  private pump(): void {
    while (this.inUse < this.size) {
      let next: string | null = null;
      for (const account of this.queues.keys()) {
        const held = this.heldBy(account);
        if (held >= this.perAccount) continue;
        if (next === null) {
          next = account;
          continue;
        }
        const best = this.heldBy(next);
        if (held < best || (held === best && (this.servedAt.get(account) ?? 0) < (this.servedAt.get(next) ?? 0))) next = account;
      }
      if (next === null) return;
      const queue = this.queues.get(next)!;
      const waiter = queue.shift()!;
      if (!queue.length) this.queues.delete(next);
      waiter.grant();
    }
  }
}
