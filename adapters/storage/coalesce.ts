/**
 * One read shared by every caller that asked for it before it began. A caller that asks while
 * no read is waiting to start schedules one for the end of this turn of the event loop
 * (`setImmediate`: after the I/O callbacks that delivered this turn's requests); callers in the
 * same turn join it, and the read starts only after all of them asked. So each caller gets a
 * value read after it asked, never one from before: as fresh as a read of its own, which is
 * what a key's revocation mark and a health probe need, at the cost of one read per turn
 * however many requests arrived in it. A caller arriving once the read has started waits for
 * the next one.
 */
export function coalesced<T>(read: () => T | Promise<T>): () => Promise<T> {
  let next: Promise<T> | null = null;
  const start = (resolve: (v: T | Promise<T>) => void, reject: (e: unknown) => void) => {
    // From here on, whoever asks gets a read that begins after they asked.
    next = null;
    try {
      resolve(read());
    } catch (err) {
      reject(err);
    }
  };
  return () => (next ??= new Promise<T>((resolve, reject) => setImmediate(start, resolve, reject)));
}

/**
 * Calls made in one turn of the event loop, run together: the first schedules `all` for the end
 * of the turn (`setImmediate`, as above), every call until then joins it, and each gets its own
 * answer, in the order asked. `all` starts after every call of the turn was made, so each answer
 * is as fresh as a call of its own; it costs one round trip for the turn instead of one per call.
 * A turn of one call runs `one`.
 *
 * One failure must not become many: when `all` fails in a way that `alone` says left nothing
 * applied (PostgreSQL reported an error, so its statement's transaction rolled back whole), each
 * call runs again by itself through `one`, and only a call that fails by itself fails. Any other
 * failure (a lost connection, a timeout: whether the statement applied is unknown) fails every
 * call of the turn, as it would have failed each of them in flight.
 */
export function batched<A, R>(
  all: (calls: A[]) => Promise<R[]>,
  one: (call: A) => Promise<R>,
  alone: (err: unknown) => boolean,
): (call: A) => Promise<R> {
  let waiting: Waiting<A, R>[] | null = null;
  const start = () => {
    const mine = waiting!;
    waiting = null;
    void settle(mine, all, one, alone);
  };
  return (call) =>
    new Promise<R>((resolve, reject) => {
      if (!waiting) {
        waiting = [];
        setImmediate(start);
      }
      waiting.push({ call, resolve, reject });
    });
}

/**
 * As `batched`, but one group at a time, of at most `max` calls: the calls of a turn go in groups
 * of `max` in the order asked, one statement after another, and calls made while a group is in
 * flight form the next one (it starts after they asked, so each answer is still as fresh as a call
 * of its own). Used for admissions (pg-counters.ts): one instance's groups never wait on each
 * other's row locks, one key's calls keep their order, a hot key's lock is held for at most `max`
 * admissions at a time, and a turn's answers leave in groups rather than all at once. A group's
 * failure is handled as in `batched`: run again call by call when `alone` says nothing of it was
 * applied, else every call of that group fails; other groups are not affected.
 */
export function serialBatched<A, R>(
  all: (calls: A[]) => Promise<R[]>,
  one: (call: A) => Promise<R>,
  alone: (err: unknown) => boolean,
  max: number,
): (call: A) => Promise<R> {
  const queue: Waiting<A, R>[] = [];
  let busy = false;
  const run = async () => {
    try {
      while (queue.length) await settle(queue.splice(0, max), all, one, alone);
    } finally {
      busy = false;
      if (queue.length) {
        busy = true;
        setImmediate(run);
      }
    }
  };
  return (call) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ call, resolve, reject });
      if (!busy) {
        busy = true;
        setImmediate(run);
      }
    });
}

type Waiting<A, R> = { call: A; resolve: (r: R) => void; reject: (e: unknown) => void };

/**
 * One group's calls answered (never rejects): a group of one through `one`; else together through
 * `all`, each its own answer in order; when `all` fails in a way `alone` says left nothing applied,
 * each call again through `one`, else every call of the group fails with that error.
 */
async function settle<A, R>(
  mine: Waiting<A, R>[],
  all: (calls: A[]) => Promise<R[]>,
  one: (call: A) => Promise<R>,
  alone: (err: unknown) => boolean,
): Promise<void> {
  const each = () => Promise.all(mine.map((w) => one(w.call).then(w.resolve, w.reject)));
  if (mine.length === 1) return void (await each());
  let rs: R[];
  try {
    rs = await all(mine.map((w) => w.call));
  } catch (err) {
    if (alone(err)) await each();
    else mine.forEach((w) => w.reject(err));
    return;
  }
  mine.forEach((w, i) => w.resolve(rs[i]!));
}
