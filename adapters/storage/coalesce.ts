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
