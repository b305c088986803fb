/**
 * POST /v1/search, the options that read result pages (api.md §8): include_raw_content,
 * chunks_per_source, include_images, include_favicon and include_answer (extractive, and by a
 * fake OpenAI-compatible model on 127.0.0.1). Pages come from local servers through the guarded
 * page port; the engine answer is SearXNG's documented JSON pointing at them.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import * as v from "valibot";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SearchResponseSchema } from "../../core/operations/search/schema.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { localPages, QUESTION, searxngBody, serveArticles, supportShare, type Served } from "../research/fixtures.ts";

interface Result { url: string; raw_content: string | null; chunks?: string[]; favicon?: string | null; excerpt: string | null }

const para = (s: string) => `<p>${s}</p>`;
const PUTTY = `<!doctype html><html lang="en"><head><title>All about blue tack</title>
<link rel="stylesheet" href="/s.css"><link rel="shortcut icon" href="/static/putty.png">
<meta property="article:published_time" content="2024-03-10T09:00:00Z"><meta property="og:image" content="/img/card.jpg"><meta property="og:image:alt" content="A ball of blue tack putty">
</head><body><nav><a href="/">Home</a></nav><article><h1>All about blue tack</h1>
${para("Blue tack is a reusable putty that holds posters on walls without nails or tape. Students like blue tack because it leaves walls clean.")}
<h2>Where the putty came from</h2>
${para("The putty was invented by accident in 1969 when a sealant experiment failed, and the company sold the blue tack instead.")}
${para("Our town library opens at nine on weekdays and closes early on Sundays during the summer months of every year.")}
<img src="/img/wall.jpg" alt="Blue tack holding a poster on a wall" width="600" height="400"><img src="/px.gif" width="1" height="1" alt="">
${para("To remove blue tack from fabric, freeze the putty with an ice cube and then pick the hardened pieces off by hand.")}
${para("The weather this weekend will be mild with light rain on Saturday morning and sunshine in the afternoon.")}
${para("Blue tack can also clean a keyboard: press the putty between the keys and it lifts <strong>dust and crumbs</strong> out.")}
${para("Some teachers buy blue tack in bulk because a single packet of putty lasts a whole school term of displays.")}
</article><footer>© 2024</footer></body></html>`;
const OLD = `<!doctype html><html><head><title>Blue tack in 2015</title><meta property="article:published_time" content="2015-06-01T10:00:00Z"></head>
<body><article><h1>Blue tack in 2015</h1>${para("Back in 2015 blue tack putty was already the favourite way to hang posters in student rooms.")}</article></body></html>`;
const PLAIN = `<!doctype html><html><head><title>Office supplies</title></head><body><main><h1>Office supplies</h1>
${para("Staplers, paper clips and rubber bands are the most ordered office supplies in small companies every year.")}
${para("A poster can hang for months with blue tack putty, according to the facilities manager of the building.")}
${para("Printer paper prices rose again this spring after two quiet years, and buyers are stocking up early.")}
</main></body></html>`;

describe("POST /v1/search options that read pages", () => {
  let replay: ReplayServer;
  let site: PageServer;
  let t: TestApp;
  let key: string;
  const ok = async (json: unknown) => {
    const res = await t.request("/v1/search", { method: "POST", key, json });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(v.safeParse(SearchResponseSchema, body).success).toBe(true);
    return body;
  };
  const byPath = (body: { results: Result[] }, path: string) => body.results.find((r) => r.url.endsWith(path))!;

  beforeAll(async () => {
    replay = await startReplayServer();
    site = await startPageServer();
    site.route("/putty", send("text/html; charset=utf-8", PUTTY));
    site.route("/plain", send("text/html; charset=utf-8", PLAIN));
    site.route("/old", send("text/html; charset=utf-8", OLD));
  });
  afterAll(async () => {
    await replay.close();
    await site.close();
  });
  afterEach(async () => {
    for (const k of Object.keys(replay.bodies)) delete replay.bodies[k];
    await t?.close();
  });

  async function app(env: Record<string, string> = {}) {
    t = await makeApp({ env: { ...replayEnv(replay.url), ...env }, pages: localPages(), clock: undefined });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["search"])).secret;
    replay.bodies.searxng = searxngBody("blue tack putty", [
      { url: `${site.url}/putty`, title: "All about blue tack", content: "Blue tack is a reusable putty.", img_src: "https://img.example/engine-thumb.jpg" } as never,
      { url: `${site.url}/plain`, title: "Office supplies", content: "Staplers and blue tack." },
    ]);
  }
  const ask = (extra: object) => ok({ query: "blue tack putty", backends: ["searxng"], ...extra });

  it("include_raw_content gives every result's whole page as markdown (true or \"markdown\") or text, even at tier basic", async () => {
    await app();
    const md = await ask({ include_raw_content: true });
    const putty = byPath(md, "/putty").raw_content!;
    expect(putty).toContain("## Where the putty came from");
    expect(putty).toContain("**dust and crumbs**");
    expect(putty).toContain("freeze the putty with an ice cube");
    expect(byPath(md, "/plain").raw_content).toContain("Printer paper prices rose again");
    expect(byPath(md, "/putty").excerpt).toBeNull();
    const text = await ask({ include_raw_content: "text" });
    const plain = byPath(text, "/putty").raw_content!;
    expect(plain).toContain("Where the putty came from");
    expect(plain).not.toMatch(/\*\*|^#/m);
    expect(text.meta.tokens_used).toBeGreaterThan(0);
    const none = await ask({});
    expect(none.results.every((r: Result) => r.raw_content === null)).toBe(true);
  });

  it("chunks_per_source gives at most that many query-relevant passages per result, best first", async () => {
    await app();
    const three = await ask({ chunks_per_source: 3 });
    const chunks = byPath(three, "/putty").chunks!;
    expect(chunks).toHaveLength(3);
    for (const c of chunks) expect(c.toLowerCase()).toMatch(/blue tack|putty/);
    for (const c of chunks) expect(c).not.toMatch(/library|weather/);
    // The other page has one passage on the query: one chunk, not three.
    expect(byPath(three, "/plain").chunks).toEqual([expect.stringContaining("blue tack putty")]);
    const one = await ask({ chunks_per_source: 1 });
    expect(byPath(one, "/putty").chunks).toHaveLength(1);
    expect(one.results.every((r: Result) => r.chunks!.length <= 1)).toBe(true);
  });

  it("include_favicon: the page's declared icon when read, else /favicon.ico; no page is fetched just for it", async () => {
    await app();
    const hits = site.hits.length;
    const bare = await ask({ include_favicon: true });
    expect(site.hits.length).toBe(hits);
    expect(byPath(bare, "/putty").favicon).toBe(`${site.url}/favicon.ico`);
    const read = await ask({ include_favicon: true, include_raw_content: "text" });
    expect(byPath(read, "/putty").favicon).toBe(`${site.url}/static/putty.png`);
    expect(byPath(read, "/plain").favicon).toBe(`${site.url}/favicon.ico`);
  });

  it("with a date range, undated results are dated from their own pages before the filter, and meta counts it", async () => {
    await app();
    replay.bodies.searxng = searxngBody("blue tack putty", [
      { url: `${site.url}/putty`, title: "All about blue tack", content: "Blue tack is a reusable putty." },
      { url: `${site.url}/old`, title: "Blue tack in 2015", content: "Blue tack putty in 2015." },
      { url: `${site.url}/plain`, title: "Office supplies", content: "Staplers and blue tack." },
    ]);
    const body = await ask({ start_date: "2024-01-01", end_date: "2024-12-31" });
    expect(body.results.map((r: Result) => r.url)).toEqual([`${site.url}/putty`]);
    expect(body.results[0].published_at).toBe("2024-03-10T09:00:00Z");
    expect(body.meta.date_filter).toEqual({ start_date: "2024-01-01", end_date: "2024-12-31", out_of_range: 1, undated: 1, dated_from_pages: 2 });
    const kept = await ask({ start_date: "2024-01-01", undated: "keep" });
    expect(kept.results.map((r: Result) => r.url).sort()).toEqual([`${site.url}/plain`, `${site.url}/putty`]);
    expect(kept.meta.undated).toBe("kept");
  });

  it("include_answer with nothing on the question in the results: answer null, and meta.ignored says why", async () => {
    await app();
    const body = await ok({ query: "lattice quantum chromodynamics confinement", backends: ["searxng"], include_answer: true });
    expect(body.results.length).toBe(2);
    expect(body.answer).toBeNull();
    expect(body.meta.answer).toBe("extractive");
    expect(body.meta.ignored).toContainEqual({ option: "include_answer", reason: expect.stringMatching(/answer is null/) });
  });

  it("include_images lists the engine's thumbnails and the pages' card and content images (no pixels), with alt text on request", async () => {
    await app();
    const body = await ask({ include_images: true });
    const urls = body.images.map((i: { url: string }) => i.url);
    expect(urls).toEqual(["https://img.example/engine-thumb.jpg", `${site.url}/img/card.jpg`, `${site.url}/img/wall.jpg`]);
    expect(body.images.every((i: { description: string | null; result_url: string }) => i.description === null && i.result_url === `${site.url}/putty`)).toBe(true);
    const described = await ask({ include_images: true, include_image_descriptions: true });
    expect(described.images.map((i: { description: string }) => i.description)).toEqual(["All about blue tack", "A ball of blue tack putty", "Blue tack holding a poster on a wall"]);
  });
});

describe("POST /v1/search include_answer", () => {
  let replay: ReplayServer;
  let served: Served[];
  let model: { server: Server; url: string; mode: "cite" | "500"; hanging: Set<ServerResponse> };
  let t: TestApp;
  let key: string;
  const ok = async (json: unknown) => {
    const res = await t.request("/v1/search", { method: "POST", key, json });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body;
  };
  /** `text [1][3].` sentences of an answer, with the result numbers they cite. */
  const cited = (answer: string) =>
    answer.split(/(?<=\][.!?])\s+/).map((s) => ({ text: s.replace(/\s*(\[\d+\])+([.!?])$/, "$2"), numbers: [...s.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])) }));

  beforeAll(async () => {
    replay = await startReplayServer();
    served = await serveArticles();
    const server = createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        if (model.mode === "500") return res.writeHead(500).end("{}");
        const prompt = JSON.parse(raw).messages[1].content as string;
        const first = /^\[S1\][^\n]*\n- ([^\n]+)/m.exec(prompt)![1]!;
        const sentence = first.split(/(?<=[.!?])\s+/).find((s) => s.split(" ").length >= 8) ?? first;
        const content = JSON.stringify({ summary: `${sentence.replace(/[.!?]+$/, "")} [S1]. Bananas grow on the surface of Mars every spring [S2].`, findings: [] });
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }], usage: { total_tokens: 321 } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    model = { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, mode: "cite", hanging: new Set() };
  });
  afterAll(async () => {
    await replay.close();
    for (const s of served) await s.site.close();
    model.server.closeAllConnections();
    await new Promise((r) => model.server.close(r));
  });
  afterEach(async () => {
    await t?.close();
  });

  async function app(env: Record<string, string> = {}) {
    t = await makeApp({ env: { ...replayEnv(replay.url), QUARRY_EGRESS_ALLOW: "127.0.0.1/32", ...env }, pages: localPages(), clock: undefined });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["search"])).secret;
    replay.bodies.searxng = searxngBody(QUESTION, served.map((s) => ({ url: s.url, title: s.title, content: s.snippet })));
  }

  it("extractive: a few sentences, each citing result numbers whose pages say it; advanced says more", async () => {
    await app();
    const body = await ok({ query: QUESTION, backends: ["searxng"], include_answer: true });
    expect(body.meta.answer).toBe("extractive");
    const sentences = cited(body.answer);
    expect(sentences.length).toBeGreaterThanOrEqual(2);
    expect(sentences.length).toBeLessThanOrEqual(3);
    for (const s of sentences) {
      expect(s.numbers.length).toBeGreaterThan(0);
      for (const n of s.numbers) {
        const result = body.results[n - 1];
        const source = served.find((x) => x.url === result.url)!;
        expect(supportShare(s.text, source.text)).toBeGreaterThanOrEqual(0.8);
      }
    }
    const advanced = await ok({ query: QUESTION, backends: ["searxng"], include_answer: "advanced" });
    expect(cited(advanced.answer).length).toBeGreaterThan(sentences.length);
    expect(body.meta.tokens_used).toBeGreaterThan(0);
  }, 30_000);

  it("with QUARRY_LLM_URL the model writes it; unsupported sentences are dropped; a failing model falls back, named in meta.ignored", async () => {
    await app({ QUARRY_LLM_URL: model.url });
    model.mode = "cite";
    const body = await ok({ query: QUESTION, backends: ["searxng"], include_answer: "basic" });
    expect(body.meta.answer).toBe("llm");
    expect(body.answer).toMatch(/ \[1\]\.$/);
    expect(body.answer).not.toMatch(/Bananas/);
    expect(body.meta.tokens_used).toBeGreaterThanOrEqual(321);
    await t.close();
    await app({ QUARRY_LLM_URL: model.url });
    model.mode = "500";
    const fallback = await ok({ query: QUESTION, backends: ["searxng"], include_answer: true, max_results: 4 });
    expect(fallback.meta.answer).toBe("extractive");
    expect(fallback.answer).toMatch(/\[\d\]/);
    expect(fallback.meta.ignored).toContainEqual({ option: "include_answer", reason: expect.stringMatching(/HTTP 500.*extractive/) });
  }, 40_000);
});
