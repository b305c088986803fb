/**
 * Extraction in a small pool of worker threads (#19 item 5). Parsing a page builds a large,
 * short-lived DOM, and V8 keeps the heap it grew to for those: in one process, RSS stayed about
 * 150 MB above idle after bursts of scrapes. Here each worker is its own V8 isolate, and a
 * worker that has been idle for `idleMs`, or whose heap has grown past `maxHeapBytes`, is ended:
 * its whole heap goes back to the system with it. The next page starts a fresh one.
 *
 * The result is what the in-process extractor gives (the worker runs that same function). If a
 * worker crashes under a page, that page is extracted in process. A page that takes a worker past
 * its heap limit is refused (422 unsupported_content) instead: extracting it on the server's own
 * thread stalled every other request for as long as it took (30 s for 6 MB of tiny paragraphs).
 * A page whose request gave up (its deadline, a cancelled job: `req.signal`) leaves the queue, or
 * ends the worker busy with it, so it holds no worker that other pages wait for.
 */
import { ApiError } from "../../core/errors.ts";
import { inProcessExtractor } from "../../core/extract/run.ts";
import type { ExtractResult } from "../../core/ports/extract.ts";
import type { ExtractPort, ExtractRequest, Logger } from "../../core/ports.ts";
import type { FromWorker, ToWorker } from "./worker.ts";

/** One worker, whatever the runtime's kind (node:worker_threads, Web Worker). */
export interface WorkerLike {
  post(message: ToWorker): void;
  onMessage(handler: (message: FromWorker) => void): void;
  /** The worker ended without being asked to (crash, out of memory). */
  onExit(handler: (reason: string) => void): void;
  terminate(): Promise<void>;
}

export interface PoolOptions {
  /** Workers at most; pages beyond them wait their turn. */
  size: number;
  /** A worker idle this long is ended. */
  idleMs: number;
  /** A worker whose heap has grown past this is ended after its page. */
  maxHeapBytes: number;
  spawn: () => WorkerLike;
  logger?: Logger;
}

interface Job {
  id: number;
  /** What the worker is sent: the request without its signal (which does not cross threads). */
  req: ExtractRequest;
  resolve: (r: ExtractResult) => void;
  reject: (e: unknown) => void;
  /** Its request gave up: answered already, its result is not wanted. */
  dropped?: boolean;
}

/** A worker that ended for its heap limit, as each runtime words it. */
const OUT_OF_MEMORY = /ERR_WORKER_OUT_OF_MEMORY|out of memory/i;

interface Slot {
  worker: WorkerLike;
  /** Pages posted to it and not yet answered, oldest first (it works them in that order). */
  jobs: Job[];
  idle: ReturnType<typeof setTimeout> | null;
  /** Takes no more pages; ended once those it holds are answered (its heap grew too large). */
  retiring: boolean;
}

/**
 * Pages a worker holds at once: the one it works on and the next, waiting in its message queue, so
 * that it starts the next page the moment it answers one instead of waiting for the main thread to
 * read the answer and post again (a busy crawl's main thread left the worker idle ~40 % of the time).
 */
const PIPELINE = 2;

export interface PoolStats {
  /** Workers running now. */
  workers: number;
  busy: number;
  queued: number;
  started: number;
  /** Ended for their heap's size. */
  recycled: number;
  /** Ended after idling. */
  idled: number;
  /** Died under a page (its page was extracted in process). */
  crashed: number;
}

export class ExtractPool implements ExtractPort {
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private seq = 0;
  private closed = false;
  private counts = { started: 0, recycled: 0, idled: 0, crashed: 0 };

  constructor(private readonly opts: PoolOptions) {}

  extract(request: ExtractRequest): Promise<ExtractResult> {
    const { signal, ...req } = request;
    if (this.closed) return inProcessExtractor.extract(req);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const job: Job = { id: ++this.seq, req, resolve, reject };
      if (signal) {
        const drop = () => this.drop(job, signal.reason);
        signal.addEventListener("abort", drop, { once: true });
        const settled = () => signal.removeEventListener("abort", drop);
        job.resolve = (r) => (settled(), resolve(r));
        job.reject = (e) => (settled(), reject(e));
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /**
   * The page's request gave up. Waiting: it leaves the queue. Being extracted: its worker is
   * ended (what it holds next goes back to the queue's head), since it would stay busy for a
   * result nobody reads. Next in a worker's pipeline: it is answered now, its result ignored.
   */
  private drop(job: Job, reason: unknown): void {
    job.dropped = true;
    job.reject(reason);
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      return;
    }
    const slot = this.slots.find((s) => s.jobs[0] === job);
    if (!slot) return;
    this.slots = this.slots.filter((s) => s !== slot);
    this.queue.unshift(...slot.jobs.slice(1).filter((j) => !j.dropped));
    slot.jobs = [];
    void this.end(slot);
    this.pump();
  }

  /**
   * Starts a worker now if none runs (a job was accepted: its pages follow), so its start overlaps
   * the job's first requests (robots.txt, the first page) instead of following them. Unused, it
   * idles out like any other.
   */
  warm(): void {
    if (this.closed || this.slots.length) return;
    const slot = this.start();
    if (slot && !slot.jobs.length) this.idleAfter(slot);
  }

  stats(): PoolStats {
    return { workers: this.slots.length, busy: this.slots.filter((s) => s.jobs.length).length, queued: this.queue.length, ...this.counts };
  }

  /** Ends every worker; pages still waiting are extracted in process. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots;
    this.slots = [];
    for (const job of this.queue.splice(0)) inProcessExtractor.extract(job.req).then(job.resolve, job.reject);
    await Promise.all(slots.map((s) => this.end(s)));
  }

  private pump(): void {
    while (this.queue.length) {
      // An idle worker first, then a new one while there is room, then the next place in a pipeline.
      let slot = this.withRoom(1);
      if (!slot && this.slots.filter((s) => !s.retiring).length < this.opts.size) {
        slot = this.start();
        if (!slot) return;
      }
      slot ??= this.withRoom(PIPELINE);
      if (!slot) return;
      const job = this.queue.shift()!;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.jobs.push(job);
      slot.worker.post({ id: job.id, req: job.req });
    }
  }

  /** The least loaded worker holding fewer than `limit` pages, if any. */
  private withRoom(limit: number): Slot | undefined {
    let best: Slot | undefined;
    for (const s of this.slots) if (!s.retiring && s.jobs.length < limit && (!best || s.jobs.length < best.jobs.length)) best = s;
    return best;
  }

  private start(): Slot | undefined {
    let worker: WorkerLike;
    try {
      worker = this.opts.spawn();
    } catch (err) {
      // No worker can start here: extract in process from now on.
      this.opts.logger?.warn({ err: String(err) }, "extraction workers unavailable; extracting in process");
      this.closed = true;
      for (const job of this.queue.splice(0)) inProcessExtractor.extract(job.req).then(job.resolve, job.reject);
      return undefined;
    }
    const slot: Slot = { worker, jobs: [], idle: null, retiring: false };
    worker.onMessage((m) => this.answered(slot, m));
    worker.onExit((reason) => this.lost(slot, reason));
    this.slots.push(slot);
    this.counts.started++;
    return slot;
  }

  private answered(slot: Slot, m: FromWorker): void {
    const at = slot.jobs.findIndex((j) => j.id === m.id);
    if (at < 0) return;
    const [job] = slot.jobs.splice(at, 1);
    if (m.ok) job!.resolve(m.result as ExtractResult);
    else job!.reject(new Error(m.error));
    if (m.heapBytes > this.opts.maxHeapBytes && !slot.retiring) {
      this.counts.recycled++;
      slot.retiring = true;
    }
    if (slot.retiring) {
      if (!slot.jobs.length) this.retire(slot);
    } else if (!slot.jobs.length && !this.queue.length) {
      this.idleAfter(slot);
    }
    this.pump();
  }

  private idleAfter(slot: Slot): void {
    slot.idle = setTimeout(() => {
      this.counts.idled++;
      this.retire(slot);
    }, this.opts.idleMs);
    (slot.idle as { unref?: () => void }).unref?.();
  }

  private lost(slot: Slot, reason: string): void {
    if (!this.slots.includes(slot)) return; // retired on purpose
    this.slots = this.slots.filter((s) => s !== slot);
    if (slot.idle) clearTimeout(slot.idle);
    const jobs = slot.jobs.splice(0).filter((j) => !j.dropped);
    if (jobs.length) {
      this.counts.crashed++;
      if (OUT_OF_MEMORY.test(reason)) {
        // The page it worked on (the first; the next had not begun) needs more than a worker's heap:
        // refused, not moved to the server's own thread. The next goes to a fresh worker.
        const [page, ...rest] = jobs;
        this.opts.logger?.warn({ reason, url: page!.req.url }, "a page took an extraction worker past its heap limit; it is refused");
        page!.reject(new ApiError("unsupported_content", `The page at ${page!.req.url} is too large or too complex to extract (it needs more memory than Quarry gives one page).`));
        this.queue.unshift(...rest);
      } else {
        this.opts.logger?.warn({ reason, pages: jobs.length }, "an extraction worker died under a page; extracting its pages in process");
        for (const job of jobs) inProcessExtractor.extract(job.req).then(job.resolve, job.reject);
      }
    }
    this.pump();
  }

  private retire(slot: Slot): void {
    this.slots = this.slots.filter((s) => s !== slot);
    void this.end(slot);
  }

  private async end(slot: Slot): Promise<void> {
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = null;
    await slot.worker.terminate().catch(() => {});
  }
}
