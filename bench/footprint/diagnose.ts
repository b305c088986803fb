/**
 * What holds the memory (run with --expose-gc): the same bursts in process, printing the heap,
 * external memory and the cache's own count after a full GC.
 *   node --expose-gc --import tsx bench/footprint/diagnose.ts [bursts]
 */
import { readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { getHeapSpaceStatistics } from "node:v8";
import { gunzipSync } from "node:zlib";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { benchSet } from "../data.ts";
import { makeApp } from "../../tests/helpers/app.ts";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => { throw new Error("run with --expose-gc"); });
const bursts = Number(process.argv[2] ?? 6);
const formats = (process.argv[3] ?? "markdown").split(",");
const dir = join(benchSet("article-extraction"), "html");
const pages = new Map(readdirSync(dir).filter((f) => f.endsWith(".html.gz")).map((f) => [f.replace(".html.gz", ""), gunzipSync(readFileSync(join(dir, f)))]));
const site = createServer((req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(pages.get((req.url ?? "").split("?")[0].slice(3))));
await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
const t = await makeApp({
  storage: "sqlite",
  pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
  env: { QUARRY_PLANS: '{"bench":{"quota":null,"per_minute":1000000}}', QUARRY_CACHE_MAX_BYTES: process.env.QUARRY_CACHE_MAX_BYTES },
});
t.clock.now = () => Date.now();
const key = (await t.key("bench", ["scrape"], "bench")).secret;
const mb = (n: number) => (n / 2 ** 20).toFixed(0);
const report = async (label: string) => {
  gc();
  const m = process.memoryUsage();
  const c = await t.ports.cache.stats();
  console.log(`${label}: rss ${mb(m.rss)} heapUsed ${mb(m.heapUsed)} heapTotal ${mb(m.heapTotal)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)} | cache ${c.entries} entries, ${mb(c.bytes)} MB counted`);
};
await report("start");
const ids = [...pages.keys()];
for (let b = 1; b <= bursts; b++) {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < ids.length) {
      const id = ids[next++];
      await (await t.request("/v1/scrape", { method: "POST", key, json: { url: `${siteUrl}/p/${id}?burst=${b}`, formats } })).text();
    }
  }));
  await report(`burst ${b}`);
}
for (const sp of getHeapSpaceStatistics()) console.log(`  ${sp.space_name}: size ${mb(sp.space_size)} used ${mb(sp.space_used_size)}`);
site.close();
