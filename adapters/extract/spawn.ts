/**
 * How each runtime starts an extraction worker: a node:worker_threads Worker on Node (with a
 * heap limit), a Web Worker on Deno and Bun (both run the TypeScript source directly).
 */
import type { WorkerLike } from "./pool.ts";
import type { FromWorker } from "./worker.ts";

/**
 * The worker's entry on Node: beside this file when running from the sources (a small .mjs
 * that loads them through tsx), or dist/extract-worker.js when running the ahead-of-time build,
 * wherever in dist/ the bundler put this code.
 */
export function nodeWorkerEntry(here = import.meta.url): URL {
  if (here.endsWith(".ts")) return new URL("./worker-tsx.mjs", here);
  const at = here.lastIndexOf("/dist/");
  if (at < 0) throw new Error(`cannot find the extraction worker from ${here}`);
  return new URL(`${here.slice(0, at)}/dist/extract-worker.js`);
}

/**
 * `maxYoungGenerationMb` caps the worker's young generation (V8's default is sized for a main
 * thread): a page's DOM dies young, and a smaller nursery is swept more often but stays
 * resident at a fraction of the size.
 */
export async function nodeSpawner(maxOldGenerationMb: number, maxYoungGenerationMb?: number): Promise<() => WorkerLike> {
  const { Worker } = await import("node:worker_threads");
  const entry = nodeWorkerEntry();
  const resourceLimits = { maxOldGenerationSizeMb: maxOldGenerationMb, ...(maxYoungGenerationMb ? { maxYoungGenerationSizeMb: maxYoungGenerationMb } : {}) };
  return () => {
    const w = new Worker(entry, { resourceLimits });
    // An idle worker never keeps the process alive; the server does while it runs.
    w.unref();
    return {
      post: (m) => w.postMessage(m),
      onMessage: (h) => void w.on("message", (m: FromWorker) => h(m)),
      onExit: (h) => {
        w.on("error", (e) => h(String(e)));
        w.on("exit", (code) => h(`exit ${code}`));
      },
      terminate: async () => void (await w.terminate()),
    };
  };
}

/** Deno and Bun: a module Web Worker on worker.ts. */
export function webSpawner(): () => WorkerLike {
  const entry = new URL("./worker.ts", import.meta.url).href;
  return () => {
    const w = new Worker(entry, { type: "module" });
    (w as unknown as { unref?: () => void }).unref?.();
    return {
      post: (m) => w.postMessage(m),
      onMessage: (h) => w.addEventListener("message", (e) => h((e as MessageEvent<FromWorker>).data)),
      onExit: (h) => w.addEventListener("error", (e) => {
        e.preventDefault();
        h((e as ErrorEvent).message);
      }),
      terminate: async () => w.terminate(),
    };
  };
}
