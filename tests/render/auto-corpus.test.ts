/**
 * `render: "auto"` on the page kinds of bench/render/corpus.ts, through a real Quarry server
 * (`bin/quarry.js serve`) and real Chromium: each page is rendered exactly when it should be, and
 * the answer holds its main text. The bench (bench/render/auto.ts) measures the same set.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORPUS, scrapeCorpus, startCorpusSite, type CorpusResult, type CorpusSite } from "../../bench/render/corpus.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const BROWSERS = ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].filter((p) => existsSync(p));

describe.skipIf(!BROWSERS.length).each(BROWSERS)("render auto on the corpus of page kinds (%s)", (CHROMIUM) => {
  let site: CorpusSite;
  let server: Server;
  let results: CorpusResult[];

  beforeAll(async () => {
    site = await startCorpusSite();
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_EGRESS_ALLOW: "127.0.0.2/32", QUARRY_IP_RATE: "off", QUARRY_CHROMIUM_PATH: CHROMIUM };
    const { key } = createKeyCli(env, "acme", "scrape");
    server = await startServer("node", env);
    results = await scrapeCorpus(server.url, key, site.url);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await site?.close();
  });

  it.each(CORPUS.map((p, i) => [p.kind, i] as const))("%s", (_kind, i) => {
    const r = results[i]!;
    expect(r.status).toBe(200);
    expect({ path: r.page.path, rendered: r.rendered }).toEqual({ path: r.page.path, rendered: r.page.render });
    expect(r.text).toContain(r.page.text);
    if (r.page.absent) expect(r.text).not.toContain(r.page.absent);
  });
});
