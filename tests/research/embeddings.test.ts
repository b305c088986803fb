/**
 * POST /v1/research with an embeddings model (QUARRY_EMBEDDINGS_URL). The model is a local
 * fake OpenAI-compatible `/embeddings` server on 127.0.0.1 — a test double at the internet
 * edge, as for the LLM — that answers deterministic bag-of-concepts vectors: words are folded
 * through a small synonym table ("refrigerator" and "fridge" are one concept) and hashed into
 * 512 dimensions. So it knows what the lexical path cannot: that a page about refrigerators
 * answers a question about fridges.
 */
import { createServer, type Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ResearchResponse } from "../../core/operations/research/schema.ts";
import { embedTexts, EmbeddingsError } from "../../core/operations/research/embeddings.ts";
import { ConfigError, parseConfig } from "../../core/config.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { localPages, searxngBody } from "./fixtures.ts";

const SYNONYMS: Record<string, string> = {
  fridge: "fridge", refrigerator: "fridge", food: "food", grocery: "food", groceries: "food", cold: "cold", chilled: "cold", cool: "cold", chill: "cold",
};
const IGNORED = new Set("a an the how do does is it of in on and to by its at every then so that".split(" "));

function vector(text: string): number[] {
  const v = new Array<number>(512).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (IGNORED.has(raw)) continue;
    const word = SYNONYMS[raw] ?? SYNONYMS[raw.replace(/s$/, "")] ?? raw.replace(/s$/, "");
    let h = 7;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) % 9973;
    v[h % 512]! += 1;
  }
  return v;
}

type Mode = "ok" | "500" | "short";
interface FakeEmbeddings {
  url: string;
  mode: Mode;
  requests: { auth: string | undefined; model: string; input: string[] }[];
  close(): Promise<void>;
}

async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const fake: FakeEmbeddings = { url: "", mode: "ok", requests: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      if (req.url !== "/v1/embeddings") return res.writeHead(404).end();
      const body = JSON.parse(raw) as { model: string; input: string[] };
      fake.requests.push({ auth: req.headers.authorization, model: body.model, input: body.input });
      if (fake.mode === "500") return res.writeHead(500, { "content-type": "application/json" }).end('{"error":"overloaded"}');
      const input = fake.mode === "short" ? body.input.slice(1) : body.input;
      // Answered in reverse order with indexes, as servers may: the client must put them back.
      const data = input.map((t, index) => ({ object: "embedding", index, embedding: vector(t) })).reverse();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model: body.model }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  fake.close = () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); });
  return fake;
}

const QUESTION = "How do fridges keep food cold?";
const PAGES: { title: string; paragraphs: string[] }[] = [
  { title: "Coffee brewing at home", paragraphs: [
    "Slow coffee is made by steeping coarse grounds in water for twelve hours.",
    "Strain it through a paper filter and keep the jar in the fridge overnight before serving.",
    "It tastes smooth and less acidic than coffee brewed with hot water."] },
  { title: "Magnet collecting for beginners", paragraphs: [
    "Collectors trade rare magnets at fairs all over the country every summer.",
    "Old advertising magnets from the fifties fetch the highest prices at auction.",
    "Some people simply stick their favourite food magnets on the fridge door."] },
  { title: "Inside the kitchen appliance", paragraphs: [
    "Inside every refrigerator a refrigerant evaporates in thin coils and absorbs heat from the groceries.",
    "A compressor squeezes the vapour so that the refrigerator gives that heat away through the coils at the back.",
    "This cycle runs many times an hour, so the groceries stay chilled."] },
];

describe("research with an embeddings model", () => {
  let replay: ReplayServer;
  let sites: PageServer[];
  let fake: FakeEmbeddings;
  let t: TestApp;
  let key: string;
  const urls = () => sites.map((s) => `${s.url}/page`);

  beforeAll(async () => {
    replay = await startReplayServer();
    fake = await startFakeEmbeddings();
    sites = await Promise.all(PAGES.map(() => startPageServer()));
    PAGES.forEach((p, i) => sites[i]!.route("/page", send("text/html; charset=utf-8", `<html><head><title>${p.title}</title></head><body><article><h1>${p.title}</h1>${p.paragraphs.map((x) => `<p>${x}</p>`).join("")}</article></body></html>`)));
  });
  afterAll(async () => {
    await replay.close();
    await fake.close();
    await Promise.all(sites.map((s) => s.close()));
  });
  afterEach(async () => {
    fake.mode = "ok";
    fake.requests.length = 0;
    await t?.close();
  });

  async function app(embeddings: boolean) {
    Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
    replay.bodies.searxng = searxngBody(QUESTION, PAGES.map((p, i) => ({ url: urls()[i]!, title: p.title, content: p.paragraphs[0]! })));
    const env = { ...replayEnv(replay.url), ...(embeddings ? { QUARRY_EMBEDDINGS_URL: fake.url, QUARRY_EMBEDDINGS_MODEL: "fake-embed", QUARRY_EMBEDDINGS_KEY: "sk-embed-secret" } : {}) };
    t = await makeApp({ env, pages: localPages() });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["research"])).secret;
  }
  const ask = async () => (await (await t.request("/v1/research", { method: "POST", key, json: { query: QUESTION } })).json()) as ResearchResponse;
  const applianceUrl = () => urls()[2]!;

  // The model's share of a page's relevance is 0.3 (relevance.ts SEMANTIC_DOCUMENT, chosen on the bench
  // with a real model), so it lifts the page that answers in other words but does not overturn the
  // lexical ranking on its own.
  it("ranks by meaning: the page about refrigerators rises over its lexical score and is cited; the same answer twice; the key is sent, never logged", async () => {
    await app(false);
    const lexical = await ask();
    await t.close();
    await app(true);
    const body = await ask();
    expect(body.meta.ranking).toBe("embeddings");
    expect(body.meta.embeddings_error).toBeUndefined();
    const scoreOf = (b: ResearchResponse) => b.sources.find((s) => s.url === applianceUrl())!.score;
    expect(scoreOf(body)).toBeGreaterThan(scoreOf(lexical));
    const cited = new Set(body.report.findings.flatMap((f) => f.citations).map((id) => body.sources.find((s) => s.id === id)!.url));
    expect(cited.has(applianceUrl())).toBe(true);

    expect(fake.requests.length).toBeGreaterThan(0);
    expect(fake.requests[0]!.auth).toBe("Bearer sk-embed-secret");
    expect(fake.requests[0]!.model).toBe("fake-embed");
    expect(fake.requests[0]!.input[0]).toBe(QUESTION);
    expect(fake.requests[0]!.input).toContain(PAGES[2]!.paragraphs[0]);
    expect(t.logger.text()).not.toContain("sk-embed-secret");

    const again = await ask();
    expect(again.report).toEqual(body.report);
    expect(again.sources).toEqual(body.sources);
  }, 30_000);

  it("without the model the lexical path cannot know that refrigerators are fridges", async () => {
    await app(false);
    const body = await ask();
    expect(body.meta.ranking).toBe("lexical");
    expect(body.sources[0]!.url).not.toBe(applianceUrl());
    expect(fake.requests.length).toBe(0);
  }, 30_000);

  it("a failing or malformed model leaves the lexical ranking in charge, and says why", async () => {
    await app(false);
    const lexical = await ask();
    await t.close();
    for (const mode of ["500", "short"] as const) {
      await app(true);
      fake.mode = mode;
      const res = await t.request("/v1/research", { method: "POST", key, json: { query: QUESTION } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as ResearchResponse;
      expect(body.meta.ranking).toBe("lexical");
      expect(body.meta.embeddings_error).toMatch(mode === "500" ? /HTTP 500/ : /vectors for/);
      expect(body.report).toEqual(lexical.report);
      expect(body.sources.map((s) => s.url)).toEqual(lexical.sources.map((s) => s.url));
      await t.close();
    }
  }, 30_000);

  it("reads QUARRY_EMBEDDINGS_URL/_MODEL/_KEY, and a bad URL stops start-up naming the variable", () => {
    expect(parseConfig({}).embeddings).toBeNull();
    expect(parseConfig({ QUARRY_EMBEDDINGS_URL: "http://127.0.0.1:9/v1", QUARRY_EMBEDDINGS_MODEL: "m", QUARRY_EMBEDDINGS_KEY: "k" }).embeddings).toEqual({ url: "http://127.0.0.1:9/v1", model: "m", key: "k" });
    expect(() => parseConfig({ QUARRY_EMBEDDINGS_URL: "ftp://example.org" })).toThrow(ConfigError);
    expect(() => parseConfig({ QUARRY_EMBEDDINGS_URL: "not a url" })).toThrow(/QUARRY_EMBEDDINGS_URL/);
  });

  it("the client puts vectors back in input order, batches long inputs and times out cleanly", async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `text number ${i} about fridges`);
    const vectors = await embedTexts(fetch, { url: fake.url, model: null, key: null }, texts, 5_000);
    expect(vectors.length).toBe(300);
    expect(vectors[123]).toEqual(vector(texts[123]!));
    expect(fake.requests.length).toBe(3);
    expect(fake.requests[0]!.model).toBe("default");
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const started = Date.now();
    const err = await embedTexts(fetch, { url: `http://127.0.0.1:${(silent.address() as { port: number }).port}`, model: null, key: null }, ["x"], 300).catch((e) => e);
    expect(err).toBeInstanceOf(EmbeddingsError);
    expect(err.message).toMatch(/within 300 ms/);
    expect(Date.now() - started).toBeLessThan(3_000);
    silent.closeAllConnections();
    silent.close();
  });
});
