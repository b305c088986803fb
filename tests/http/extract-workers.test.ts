/**
 * Extraction in worker threads on a real server, on each runtime (#19 item 5): Node's
 * worker_threads, Deno's and Bun's Web Workers. Scrapes of real article pages must give exactly
 * what in-process extraction gives, the worker shows in /metrics while it runs, and it ends after
 * QUARRY_EXTRACT_IDLE.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessExtractor } from "../../core/extract/run.ts";
import { article } from "../helpers/articles.ts";
import { startPageServer, type PageServer } from "../helpers/page-server.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const ids = ["21486419", "232a43fb", "23aaecd1"].map((prefix) => article(prefix).id);

function gauge(text: string, state: string): number | undefined {
  const m = new RegExp(`^quarry_extract_workers\\{state="${state}"[^}]*\\} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}

describe.each(["node", "deno", "bun"] as const)("extraction workers on %s", (runtime) => {
  let site: PageServer;
  let server: Server;
  let key: string;

  beforeAll(async () => {
    site = await startPageServer();
    for (const id of ids) {
      const { html } = article(id);
      site.route(`/${id}`, (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html));
    }
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off", QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_METRICS: "true", QUARRY_EXTRACT_IDLE: "3" };
    key = createKeyCli(env, "acme", "scrape").key;
    server = await startServer(runtime, env);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await site?.close();
  });

  it("scrapes real pages exactly as in-process extraction reads them, then ends the idle worker", async () => {
    const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
    expect(gauge(await metrics(), "running")).toBe(0); // nothing starts before the first page
    const got = await Promise.all(ids.map(async (id) => {
      const r = await fetch(`${server.url}/v1/scrape`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `${site.url}/${id}`, formats: ["markdown", "text", "html", "links"] }),
      });
      expect(r.status).toBe(200);
      return (await r.json()).data;
    }));
    const running = gauge(await metrics(), "running");
    for (let i = 0; i < ids.length; i++) {
      const want = await inProcessExtractor.extract({
        body: new TextEncoder().encode(article(ids[i]).html), contentType: "text/html; charset=utf-8", url: `${site.url}/${ids[i]}`, onlyMainContent: true,
      });
      expect(got[i].markdown.length, ids[i]).toBeGreaterThan(100);
      expect({ title: got[i].title, markdown: got[i].markdown, text: got[i].text, html: got[i].html, links: got[i].links }, ids[i])
        .toEqual({ title: want.title, markdown: want.markdown, text: want.text, html: want.html, links: want.links });
    }
    expect(running).toBe(1);
    await expect.poll(async () => gauge(await metrics(), "running"), { timeout: 20_000, interval: 250 }).toBe(0);
  }, 60_000);
});
