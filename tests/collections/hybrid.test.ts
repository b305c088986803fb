/**
 * Collection search with the embeddings hybrid (api.md §11 "Ranking"; core/collections/hybrid.ts),
 * in process on SQLite, with a real sentence-embedding model: Universal Sentence Encoder lite (the
 * devDependency @energetic-ai/embeddings, offline) behind bench/research/embeddings-server.ts, a real
 * OpenAI-compatible HTTP server on 127.0.0.1 that Quarry's embeddings client calls.
 *
 * The documents: one on how bees make honey, written in the words of its subject (nectar, enzymes,
 * evaporation), and three off the question that repeat its words (candles of the wax "bees make",
 * mead "made from honey", a honey shop). BM25 puts the word-heavy ones first; the model reads them
 * as further from the question.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddingsServer, type EmbeddingsServer } from "../../bench/research/embeddings-server.ts";
import { combineScores } from "../../core/collections/hybrid.ts";
import type { PassageHit } from "../../core/ports/collections.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";

const QUESTION = "How do bees make honey?";
const DOCS = [
  { id: "candles", title: "Beeswax candles", markdown: "Bees make wax to build the comb where they keep honey, and beekeepers sell it. To make a candle, melt the wax the bees make, dip a wick again and again, and let it cool. Candles of beeswax smell faintly of honey, and bees make enough wax in a good year for many candles." },
  { id: "mead", title: "Brewing mead", markdown: "Mead is made from honey. To make it, dissolve honey in warm water, add yeast and wait while the yeast makes alcohol from the honey. Honey made by bees in spring makes a lighter mead." },
  { id: "shop", title: "Our honey shop", markdown: "Honey makes a fine present. Order our honey online: clover honey, heather honey, honey in the comb. We make the delivery within three days, and we make gift boxes of honey too." },
  { id: "nectar", title: "How bees turn nectar into honey", markdown: "Workers collect nectar from flowers and carry it to the hive in a special stomach. In the hive the nectar is passed from mouth to mouth while enzymes break its sugars down, then the open cells are fanned with wings until most of the water evaporates. When it is thick enough each cell is sealed with a cap of fresh wax, and it keeps for years." },
];

let model: EmbeddingsServer;
const apps: TestApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await model?.close();
});
beforeAll(async () => {
  model = await startEmbeddingsServer({ cacheDir: tempDir("quarry-embeddings-"), preload: true });
}, 60_000);

async function collection(env: Record<string, string>) {
  const t = await makeApp({ storage: "sqlite", env });
  apps.push(t);
  t.clock.now = () => Date.now();
  const key = (await t.key("acme", ["scrape", "search"])).secret;
  expect((await t.request("/v1/collections", { method: "POST", key, json: { name: "bees" } })).status).toBe(201);
  expect((await t.request("/v1/collections/bees/documents", { method: "POST", key, json: { documents: DOCS } })).status).toBe(200);
  const search = async () => {
    const res = await t.request("/v1/collections/bees/search", { method: "POST", key, json: { query: QUESTION } });
    expect(res.status).toBe(200);
    return (await res.json()) as { meta: Record<string, unknown>; results: { id: string; score: number }[] };
  };
  return { search };
}

const MODEL_ENV = () => ({ QUARRY_EMBEDDINGS_URL: model.url, QUARRY_EMBEDDINGS_MODEL: "use-lite-512" });
const order = (body: { results: { id: string }[] }) => body.results.map((r) => r.id);

describe("collection search with an embeddings model", () => {
  it("puts the document on the question first, which BM25 alone ranks below documents that repeat its words", async () => {
    const lexical = await (await collection({})).search();
    expect(lexical.meta.ranking).toBe("lexical");
    expect(order(lexical)).toHaveLength(4);
    expect(order(lexical)[0]).not.toBe("nectar");
    const hybrid = await (await collection(MODEL_ENV())).search();
    expect(hybrid.meta).toMatchObject({ ranking: "hybrid" });
    expect(hybrid.meta.embeddings_error).toBeUndefined();
    expect(order(hybrid)[0]).toBe("nectar");
    expect(order(hybrid).sort()).toEqual(order(lexical).sort());
    expect(hybrid.results[0]!.score).toBe(1);
  }, 60_000);

  it("sends a passage to the model once: the same search again sends only the question", async () => {
    const { search } = await collection(MODEL_ENV());
    const first = await search();
    const texts = () => model.stats.cached + model.stats.computed;
    const before = texts();
    const again = await search();
    expect(texts() - before).toBe(1);
    expect(again.results).toEqual(first.results);
  }, 60_000);

  it("answers with BM25 alone, and says why, when the model cannot be reached", async () => {
    const lexical = await (await collection({})).search();
    const down = await (await collection({ QUARRY_EMBEDDINGS_URL: "http://127.0.0.1:9/v1" })).search();
    expect(down.meta.ranking).toBe("lexical");
    expect(down.meta.embeddings_error).toMatch(/embeddings model unreachable/);
    expect(down.results).toEqual(lexical.results);
  }, 30_000);
});

describe("combineScores", () => {
  const hit = (docId: string, score: number): PassageHit => ({ docId, url: null, title: null, heading: null, text: docId, score });
  it("adds the two scores, each scaled over the candidates, in equal shares by default", () => {
    const out = combineScores([hit("a", 10), hit("b", 8), hit("c", 5)], [0.2, 0.6, 0.4]);
    // a: 0.5·1 + 0.5·0 = 0.5; b: 0.5·0.8 + 0.5·1 = 0.9; c: 0.5·0.5 + 0.5·0.5 = 0.5
    expect(out.map((h) => [h.docId, Math.round(h.score * 1000) / 1000])).toEqual([["b", 0.9], ["a", 0.5], ["c", 0.5]]);
    expect(combineScores([hit("a", 10), hit("b", 8)], [0.2, 0.6], 0).map((h) => h.docId)).toEqual(["a", "b"]);
    expect(combineScores([hit("a", 10), hit("b", 8)], [0.2, 0.6], 1).map((h) => h.docId)).toEqual(["b", "a"]);
  });
  it("keeps the lexical order when the model sees every candidate alike", () => {
    expect(combineScores([hit("a", 3), hit("b", 2), hit("c", 1)], [0.5, 0.5, 0.5]).map((h) => h.docId)).toEqual(["a", "b", "c"]);
  });
});
