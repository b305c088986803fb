/**
 * SIGTERM to a real `quarry serve` in the middle of a crawl that a client follows over SSE: the
 * server stops soon (the stream does not hold the stop for its whole 10 s grace), exits 0, the
 * stream ends cleanly, and after a restart the job finishes with every page once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { allPages, json, waitFor } from "../helpers/job-http.ts";
import { sitePagePaths, startTestSite, type TestSite, PAGE_TIMEOUT_MS } from "../helpers/test-site.ts";

let site: TestSite;
let server: Server | null = null;

beforeAll(async () => {
  site = await startTestSite({ crawlDelay: 0.15 });
});
afterAll(async () => {
  await server?.stop("SIGKILL");
  await site?.close();
});

describe("SIGTERM during a crawl followed over SSE", () => {
  it("stops soon and cleanly, ends the stream, and the job resumes after a restart with every page once", async () => {
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}' };
    const { key } = createKeyCli(env, "acme", "scrape");
    server = await startServer("node", env);
    const started = await json(`${server.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, max_depth: 10, limit: 300, timeout_ms: PAGE_TIMEOUT_MS }) });
    const statusUrl = `${server.url}/v1/crawl/${started.id}`;
    const stream = await fetch(`${statusUrl}/events`, { headers: { authorization: `Bearer ${key}` } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let events = "";
    const streamEnd = (async () => {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: "(reset)" }));
        if (done) return value ?? "done";
        events += value;
      }
    })();
    await waitFor(statusUrl, key, (j) => j.completed >= 8, 60_000);
    const t0 = Date.now();
    const code = await server.stop("SIGTERM");
    const ms = Date.now() - t0;
    expect(code).toBe(0);
    // The stream ended with the server's stop (not cut by it 10 s later), after page events.
    expect(await streamEnd).toBe("done");
    expect(ms).toBeLessThan(6000);
    expect(events).toMatch(/event: page/);
    expect(server.output()).not.toMatch(/did not finish within 10 s/);

    server = await startServer("node", env);
    const after = await waitFor(`${server.url}/v1/crawl/${started.id}`, key, (j) => ["completed", "failed", "cancelled"].includes(j.status), 90_000);
    expect(after.status).toBe("completed");
    const pages = await allPages(after, server.url, key);
    const paths = pages.map((p) => new URL(p.url).pathname + new URL(p.url).search);
    for (const p of sitePagePaths()) expect(paths.filter((x) => x === p), p).toHaveLength(1);
    expect(new Set(paths).size).toBe(paths.length);
  }, 180_000);

  it("starts no new page of a crawl while its requests drain", async () => {
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}' };
    const { key } = createKeyCli(env, "acme", "scrape");
    server = await startServer("node", env);
    const started = await json(`${server.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, max_depth: 10, limit: 300, timeout_ms: PAGE_TIMEOUT_MS }) });
    await waitFor(`${server.url}/v1/crawl/${started.id}`, key, (j) => j.completed >= 3, 60_000);
    // A scrape of a page that never answers holds the drain for its 3 s.
    const held = fetch(`${server.url}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${site.ipUrl}/slow?held`, timeout_ms: 3000 }) }).catch(() => null);
    const slowSeen = Date.now() + 5000;
    while (!site.hits.some((h) => h.path === "/slow?held") && Date.now() < slowSeen) await new Promise((r) => setTimeout(r, 20));
    const stopAt = Date.now();
    const code = await server.stop("SIGTERM");
    const stoppedAt = Date.now();
    await held;
    server = null;
    expect(code).toBe(0);
    expect(stoppedAt - stopAt).toBeGreaterThan(2000); // the scrape did hold the drain
    // ... and only while it ran: its keep-alive connection, idle once answered, did not hold the stop to the 10 s mark.
    expect(stoppedAt - stopAt).toBeLessThan(6000);
    // The crawl (a page every 150 ms) would have fetched a dozen pages in that time; at most the
    // one it was starting as the signal arrived may begin.
    const during = site.hits.filter((h) => h.path !== "/slow?held" && h.start > stopAt + 20);
    expect(during.length, during.map((h) => h.path).join(" ")).toBeLessThanOrEqual(1);
  }, 120_000);
});
