/**
 * The extraction worker pool (#19 item 5): real worker threads on real benchmark pages. It must
 * give exactly what in-process extraction gives, never run more workers than asked, end idle
 * workers and workers whose heap grew (so their memory goes back), and survive a dying worker.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ExtractPool, type PoolOptions, type WorkerLike } from "../../adapters/extract/pool.ts";
import { nodeSpawner, nodeWorkerEntry } from "../../adapters/extract/spawn.ts";
import { inProcessExtractor } from "../../core/extract/run.ts";
import type { ExtractRequest } from "../../core/ports.ts";
import { article as realArticle, articleIds } from "../helpers/articles.ts";

/** The 15 real pages of tests/fixtures/article-extraction (English news, a pt-BR blog, a Japanese one). */
const ids = articleIds();
const utf8 = new TextEncoder();
const request = (id: string, onlyMainContent = true): ExtractRequest => ({
  body: utf8.encode(realArticle(id).html), contentType: "text/html; charset=utf-8", url: `https://news.example/${id}/`, onlyMainContent,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A small article made here (for the tests that need no real page). */
const article = (n: number): ExtractRequest => ({
  body: utf8.encode(`<!doctype html><html><head><title>Log ${n}</title></head><body><nav>Home</nav><article><h1>Log ${n}</h1>${Array.from({ length: 8 }, (_, i) => `<p>Entry ${i} of log ${n}: the keeper noted the wind, the ships that passed and the state of the lamp.</p>`).join("")}</article></body></html>`),
  contentType: "text/html; charset=utf-8", url: `https://news.example/log-${n}/`, onlyMainContent: true,
});

let pool: ExtractPool | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});
/**
 * Spawns real workers, but the first one ends when it is handed its `nth` page (the pages before it
 * are in it), as a crash or an out-of-memory would.
 */
function firstWorkerDiesAt(spawn: () => WorkerLike, nth: number): () => WorkerLike {
  let first = true;
  return () => {
    const real = spawn();
    if (!first) return real;
    first = false;
    let posts = 0;
    return { ...real, post: (m) => (++posts === nth ? void real.terminate() : real.post(m)) };
  };
}
const make = async (over: Partial<PoolOptions> = {}) => (pool = new ExtractPool({ size: 2, idleMs: 60_000, maxHeapBytes: 512 * 2 ** 20, spawn: await nodeSpawner(512), ...over }));

describe("extraction worker pool (Node worker threads)", () => {
  it("gives exactly the in-process result, for main content and whole pages, at most `size` workers at once", async () => {
    const p = await make();
    expect(ids.length).toBeGreaterThanOrEqual(15);
    const reqs = [...ids.slice(0, 11).map((id) => request(id)), ...ids.slice(11, 15).map((id) => request(id, false))];
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, p.stats().workers)), 5);
    const got = await Promise.all(reqs.map((r) => p.extract(r)));
    clearInterval(watch);
    for (let i = 0; i < reqs.length; i++) expect(got[i], ids[i]).toEqual(await inProcessExtractor.extract(reqs[i]));
    expect(got[0].markdown.length).toBeGreaterThan(200);
    expect(most).toBeLessThanOrEqual(2);
    expect(p.stats()).toMatchObject({ started: 2, busy: 0, queued: 0, crashed: 0 });
  }, 120_000);

  it("ends idle workers, and starts a fresh one for the next page", async () => {
    const p = await make({ idleMs: 300 });
    await Promise.all([p.extract(request(ids[0])), p.extract(request(ids[1]))]);
    expect(p.stats().started).toBe(2);
    await expect.poll(() => p.stats().workers, { timeout: 5_000 }).toBe(0);
    expect(p.stats().idled).toBe(2);
    const again = await p.extract(request(ids[2]));
    expect(again).toEqual(await inProcessExtractor.extract(request(ids[2])));
    expect(p.stats().started).toBe(3);
  }, 60_000);

  it("ends a worker whose heap has grown past the limit after its page", async () => {
    const p = await make({ maxHeapBytes: 1 }); // every heap is over 1 byte: each page gets a fresh worker
    for (const id of ids.slice(0, 3)) expect(await p.extract(request(id))).toEqual(await inProcessExtractor.extract(request(id)));
    expect(p.stats()).toMatchObject({ started: 3, recycled: 3 });
    await expect.poll(() => p.stats().workers).toBe(0);
  }, 60_000);

  it("extracts a page in process when its worker dies under it", async () => {
    const dying = firstWorkerDiesAt(await nodeSpawner(512), 1);
    const seen: string[] = [];
    const logger = { debug() {}, info() {}, warn: (_o: object, m?: string) => void seen.push(m ?? ""), error() {} };
    const p = await make({ size: 1, spawn: dying, logger });
    // terminate() is on purpose to the pool only when it asked; here the pool did not.
    const r = await p.extract(request(ids[3]));
    expect(r).toEqual(await inProcessExtractor.extract(request(ids[3])));
    expect(p.stats().crashed).toBe(1);
    expect(seen.join()).toContain("died under a page");
    expect(await p.extract(request(ids[4]))).toEqual(await inProcessExtractor.extract(request(ids[4])));
  }, 60_000);

  it("a worker is handed its next page while it works on one (two at most), so it never waits for the main thread", async () => {
    const spawn = await nodeSpawner(512);
    const log: string[] = [];
    const logged = (): WorkerLike => {
      const real = spawn();
      return {
        ...real,
        post: (m) => (log.push(`post ${m.id}`), real.post(m)),
        onMessage: (h) => real.onMessage((m) => (log.push(`answer ${m.id}`), h(m))),
      };
    };
    const p = await make({ size: 1, spawn: logged });
    const reqs = ids.slice(0, 4).map((id) => request(id));
    const got = await Promise.all(reqs.map((r) => p.extract(r)));
    for (let i = 0; i < reqs.length; i++) expect(got[i]).toEqual(await inProcessExtractor.extract(reqs[i]));
    // Pages 1 and 2 go at once; each answer lets the next one in, so two are in the worker until the queue is empty.
    expect(log).toEqual(["post 1", "post 2", "answer 1", "post 3", "answer 2", "post 4", "answer 3", "answer 4"]);
    expect(p.stats()).toMatchObject({ started: 1, busy: 0, queued: 0 });
  }, 60_000);

  it("a worker that dies with two pages in it: both are extracted in process", async () => {
    const dying = firstWorkerDiesAt(await nodeSpawner(512), 2);
    const p = await make({ size: 1, spawn: dying });
    const reqs = [request(ids[3]), request(ids[4]), request(ids[5])];
    const got = await Promise.all(reqs.map((r) => p.extract(r)));
    for (let i = 0; i < reqs.length; i++) expect(got[i]).toEqual(await inProcessExtractor.extract(reqs[i]));
    expect(p.stats().crashed).toBe(1);
  }, 60_000);

  it("a worker whose heap grew takes no new page and ends once the pages it holds are answered", async () => {
    const p = await make({ size: 1, maxHeapBytes: 1 });
    const reqs = ids.slice(0, 3).map((id) => request(id));
    const got = await Promise.all(reqs.map((r) => p.extract(r)));
    for (let i = 0; i < reqs.length; i++) expect(got[i]).toEqual(await inProcessExtractor.extract(reqs[i]));
    // The first worker held pages 1 and 2 and ended after both; page 3 went to a fresh one.
    expect(p.stats()).toMatchObject({ started: 2, recycled: 2, crashed: 0 });
    await expect.poll(() => p.stats().workers).toBe(0);
  }, 60_000);

  it("a page that takes its worker past the heap limit is refused, not extracted on the server's thread; the page behind it still is", async () => {
    // #28 item 1: extracting such a page in process held the event loop for as long as it took (30 s for 6 MB of tiny paragraphs).
    let spawned = 0;
    const small = await nodeSpawner(2); // 2 MB of old space: too little for the big page
    const roomy = await nodeSpawner(512);
    const p = await make({ size: 1, spawn: () => (spawned++ === 0 ? small() : roomy()) });
    const big: ExtractRequest = { ...article(1), url: "https://news.example/big/" };
    const [refused, next] = await Promise.allSettled([p.extract(big), p.extract(article(2))]);
    expect(refused.status).toBe("rejected");
    expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: "unsupported_content", status: 422 });
    expect((refused as PromiseRejectedResult).reason.message).toBe("The page at https://news.example/big/ is too large or too complex to extract (it needs more memory than Quarry gives one page).");
    expect(next).toEqual({ status: "fulfilled", value: await inProcessExtractor.extract(article(2)) });
    expect(p.stats()).toMatchObject({ crashed: 1, started: 2 });
  }, 60_000);

  it("a page whose request gave up leaves the queue, or ends the worker busy with it; the pages behind it go on", async () => {
    const p = await make({ size: 1 });
    // Slow to extract: 60,000 paragraphs (seconds of work).
    const slow: ExtractRequest = { body: utf8.encode(`<main>${"<p>The keeper wrote a line.</p>".repeat(60_000)}</main>`), contentType: "text/html", url: "https://news.example/slow/", onlyMainContent: true };
    const busy = new AbortController();
    const waiting = new AbortController();
    const first = p.extract({ ...slow, signal: busy.signal });
    const second = p.extract(article(3)); // in the worker's pipeline, behind the slow page
    const third = p.extract({ ...article(4), signal: waiting.signal }); // in the queue
    await expect.poll(() => p.stats().busy).toBe(1);
    waiting.abort(new Error("gave up waiting"));
    await expect(third).rejects.toThrow("gave up waiting");
    expect(p.stats().queued).toBe(0);
    busy.abort(new Error("deadline"));
    await expect(first).rejects.toThrow("deadline");
    // The slow page's worker was ended at once, and the page behind it went to a fresh one.
    expect(await second).toEqual(await inProcessExtractor.extract(article(3)));
    expect(p.stats()).toMatchObject({ started: 2, crashed: 0, queued: 0 });
    const aborted = new AbortController();
    aborted.abort(new Error("already"));
    await expect(p.extract({ ...article(5), signal: aborted.signal })).rejects.toThrow("already");
  }, 60_000);

  it("warm() starts one worker ahead of the pages, which the first page then uses; unused, it idles out", async () => {
    const p = await make({ idleMs: 300 });
    p.warm();
    p.warm(); // one is running: no second
    expect(p.stats()).toMatchObject({ workers: 1, started: 1, busy: 0 });
    expect(await p.extract(request(ids[8]))).toEqual(await inProcessExtractor.extract(request(ids[8])));
    expect(p.stats().started).toBe(1);
    await expect.poll(() => p.stats().workers, { timeout: 5_000 }).toBe(0);
    p.warm();
    expect(p.stats().started).toBe(2);
    await expect.poll(() => p.stats().workers, { timeout: 5_000 }).toBe(0);
    expect(p.stats().idled).toBe(2);
    await p.close();
    p.warm(); // closed: extraction is in process from now on
    expect(p.stats().started).toBe(2);
  }, 60_000);

  it("after close, extracts in process and leaves no worker", async () => {
    const p = await make();
    await p.extract(request(ids[6]));
    await p.close();
    expect(p.stats().workers).toBe(0);
    expect(await p.extract(request(ids[7]))).toEqual(await inProcessExtractor.extract(request(ids[7])));
    expect(p.stats().started).toBe(1);
  }, 60_000);

  it("finds its worker beside the sources, or in dist/ from the built bundle", async () => {
    expect(nodeWorkerEntry("file:///srv/quarry/adapters/extract/spawn.ts").href).toBe("file:///srv/quarry/adapters/extract/worker-tsx.mjs");
    expect(nodeWorkerEntry("file:///srv/quarry/dist/chunks/chunk-AB12.js").href).toBe("file:///srv/quarry/dist/extract-worker.js");
    expect(nodeWorkerEntry("file:///srv/quarry/dist/cli.js").href).toBe("file:///srv/quarry/dist/extract-worker.js");
    await sleep(0);
  });
});
