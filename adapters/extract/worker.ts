/**
 * An extraction worker (adapters/extract/pool.ts starts it): receives fetched pages, answers
 * with exactly what the core's in-process extractor gives, and with its own heap size, so the
 * pool can retire a worker whose heap has grown. Runs as a Node worker thread, and as a Web
 * Worker on Deno and Bun (Bun exposes the channel as node:worker_threads' parentPort too).
 */
import * as v8 from "node:v8";
import { parentPort } from "node:worker_threads";
import { inProcessExtractor } from "../../core/extract/run.ts";
import type { ExtractRequest } from "../../core/ports.ts";

export interface ToWorker {
  id: number;
  req: ExtractRequest;
}
export type FromWorker = { id: number; heapBytes: number } & ({ ok: true; result: unknown } | { ok: false; error: string });

interface Channel {
  post(message: FromWorker): void;
  listen(handler: (message: ToWorker) => void): void;
}

function channel(): Channel {
  if (parentPort) {
    const port = parentPort;
    return { post: (m) => port.postMessage(m), listen: (h) => void port.on("message", h) };
  }
  const scope = globalThis as unknown as { postMessage(m: unknown): void; addEventListener(t: "message", h: (e: MessageEvent<ToWorker>) => void): void };
  return { post: (m) => scope.postMessage(m), listen: (h) => scope.addEventListener("message", (e) => h(e.data)) };
}

const v8Heap = typeof v8.getHeapStatistics === "function" ? () => v8.getHeapStatistics() : undefined;

/**
 * This isolate's heap as V8 reserves it (what stays resident after a burst), asked after every
 * page. V8's own statistics answer in under a microsecond; `process.memoryUsage()` also reads the
 * process's RSS from /proc, a system call per page (~14 µs, and a chance for the thread to lose
 * its core), only to throw it away.
 */
function heapBytes(): number {
  const deno = (globalThis as { Deno?: { memoryUsage(): { heapTotal: number } } }).Deno;
  if (deno) return deno.memoryUsage().heapTotal;
  const total = v8Heap?.()?.total_heap_size;
  return typeof total === "number" && total > 0 ? total : process.memoryUsage().heapTotal;
}

// A Web Worker has a global `location` (its own script's file URL), and linkedom takes it as every
// document's base URI, so Readability would resolve relative links against it. The main thread
// of a server has none: hide it, so that a worker gives exactly what the main thread gives.
if ("location" in globalThis) {
  Object.defineProperty(globalThis, "location", { value: undefined, configurable: true, writable: true });
}

const ch = channel();
ch.listen(async ({ id, req }) => {
  try {
    const result = await inProcessExtractor.extract(req);
    ch.post({ id, ok: true, result, heapBytes: heapBytes() });
  } catch (err) {
    ch.post({ id, ok: false, error: err instanceof Error ? err.message : String(err), heapBytes: heapBytes() });
  }
});
