/**
 * POST /v1/research with a real sentence-embedding model: Universal Sentence Encoder lite (the
 * devDependency @energetic-ai/embeddings, offline, pure JS) behind bench/research/embeddings-server.ts,
 * a real OpenAI-compatible HTTP server on 127.0.0.1 that Quarry's own embeddings client calls. The
 * vectors are the model's, computed in this run (the server's cache is a fresh temp folder), so the
 * test checks what the model and Quarry's use of it do together, not a stand-in.
 *
 * The pages: two that say how bees make honey, and two about things made from the hive (beeswax
 * candles, mead) whose sentences name the question's words and some of the hive's vocabulary
 * ("Beekeepers sell the wax that bees make to seal the cells where they keep their honey"). The
 * model reads them as further from the question than the pages on it; they must not be cited. With
 * the combination before 0.3/0.1 (relevance.ts SEMANTIC_DOCUMENT, SEMANTIC_SENTENCE) a candle
 * sentence was cited. The lexical path alone keeps them out too, so this guards the model's share of
 * the ranking, not a gain over words.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResearchResponse } from "../../core/operations/research/schema.ts";
import { startEmbeddingsServer, type EmbeddingsServer } from "../../bench/research/embeddings-server.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { tempDir } from "../helpers/temp.ts";
import { localPages, searxngBody } from "./fixtures.ts";

const QUESTION = "How do bees make honey?";
const PAGES: { on: boolean; title: string; sentences: string[] }[] = [
  { on: false, title: "Making beeswax candles", sentences: [
    "Beekeepers sell the wax that bees make to seal the cells where they keep their honey.",
    "Melt the wax slowly in a double boiler, because it catches fire easily over a direct flame.",
    "Dip a cotton wick into the melted wax again and again until the candle is thick enough.",
    "Candles made of beeswax burn longer than paraffin ones and smell faintly of honey."] },
  { on: true, title: "How bees turn nectar into honey", sentences: [
    "Worker bees collect nectar from flowers and carry it back to the hive in a special honey stomach.",
    "Inside the hive, house bees pass the nectar from mouth to mouth while enzymes break its sugars down.",
    "The bees then fan the open cells with their wings until most of the water in the nectar evaporates.",
    "When the honey is thick enough, they seal each cell with a cap of fresh wax."] },
  { on: false, title: "Brewing mead at home", sentences: [
    "Mead is made by letting yeast turn the sugars in honey into alcohol over several weeks.",
    "Dissolve three pounds of honey in a gallon of warm water and let the mixture cool.",
    "Add the yeast, close the jar with an airlock, and keep it somewhere dark and warm.",
    "Bees make the honey, but the brewer decides how sweet or dry the finished mead will be."] },
  { on: true, title: "Inside the beehive", sentences: [
    "Honey starts as flower nectar that foraging bees swallow and bring home to the colony.",
    "Enzymes from the bees turn the sucrose of the nectar into simpler sugars.",
    "Fanning wings dry the nectar until it becomes thick honey, which the bees store in wax cells.",
    "A strong colony can make more honey in a summer than it needs for the winter."] },
];

describe("research with a real sentence-embedding model", () => {
  let replay: ReplayServer;
  let sites: PageServer[];
  let model: EmbeddingsServer;
  let t: TestApp;
  let key: string;
  let vectors: Map<string, number[]>;
  const urlOf = (i: number) => `${sites[i]!.url}/page`;

  beforeAll(async () => {
    replay = await startReplayServer();
    model = await startEmbeddingsServer({ cacheDir: tempDir("quarry-embeddings-"), preload: true });
    sites = await Promise.all(PAGES.map(() => startPageServer()));
    PAGES.forEach((p, i) => sites[i]!.route("/page", send("text/html; charset=utf-8", `<html><head><title>${p.title}</title></head><body><article><h1>${p.title}</h1>${p.sentences.map((x) => `<p>${x}</p>`).join("")}</article></body></html>`)));
    Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
    replay.bodies.searxng = searxngBody(QUESTION, PAGES.map((p, i) => ({ url: urlOf(i), title: p.title, content: p.sentences[0]! })));
    // Load the model and embed the pages before the first question, so no request waits out Quarry's embeddings timeout.
    const texts = [QUESTION, ...PAGES.flatMap((p) => [p.title, ...p.sentences])];
    const res = await fetch(`${model.url}/embeddings`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "use-lite-512", input: texts }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { index: number; embedding: number[] }[] };
    expect(body.data.map((d) => d.index)).toEqual(texts.map((_, i) => i));
    expect(body.data.every((d) => d.embedding.length === 512)).toBe(true);
    vectors = new Map(texts.map((t, i) => [t, body.data[i]!.embedding]));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await replay.close();
    await model.close();
    await Promise.all(sites.map((s) => s.close()));
  });

  async function ask(embeddings: boolean): Promise<ResearchResponse> {
    await t?.close();
    const env = { ...replayEnv(replay.url), ...(embeddings ? { QUARRY_EMBEDDINGS_URL: model.url, QUARRY_EMBEDDINGS_MODEL: "use-lite-512" } : {}) };
    t = await makeApp({ env, pages: localPages() });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["research"])).secret;
    const res = await t.request("/v1/research", { method: "POST", key, json: { query: QUESTION } });
    expect(res.status).toBe(200);
    return (await res.json()) as ResearchResponse;
  }
  const citedPages = (body: ResearchResponse) => new Set(body.report.findings.flatMap((f) => f.citations).map((id) => PAGES.findIndex((_, i) => urlOf(i) === body.sources.find((s) => s.id === id)!.url)));

  it("the sentences of pages the model reads as off the question are not cited, though they name its words; the pages on it lead", async () => {
    // The premise: the model puts each page on the question closer to it than each page off it
    // (the mean cosine of a page's three sentences closest to the question, as relevance.ts reads a page).
    const cosine = (a: number[], b: number[]) => a.reduce((d, x, i) => d + x * b[i]!, 0) / Math.hypot(...a) / Math.hypot(...b);
    const closeness = PAGES.map((p) => p.sentences.map((x) => cosine(vectors.get(QUESTION)!, vectors.get(x)!)).sort((a, b) => b - a).slice(0, 3).reduce((a, b) => a + b, 0) / 3);
    expect(Math.min(...closeness.filter((_, i) => PAGES[i]!.on))).toBeGreaterThan(Math.max(...closeness.filter((_, i) => !PAGES[i]!.on)));
    const body = await ask(true);
    expect(body.meta.ranking).toBe("embeddings");
    expect(body.meta.embeddings_error).toBeUndefined();
    const order = body.sources.map((s) => PAGES.findIndex((_, i) => urlOf(i) === s.url));
    expect(order.slice(0, 2).every((i) => PAGES[i]!.on)).toBe(true);
    const cited = citedPages(body);
    expect(cited.size).toBe(2);
    for (const i of cited) expect(PAGES[i]!.on, `cited "${PAGES[i]!.title}"`).toBe(true);
    expect(body.report.findings.some((f) => /evaporates|dry the nectar/.test(f.text))).toBe(true);
    // The same answer again, from the same vectors.
    const again = await ask(true);
    expect(again.report).toEqual(body.report);
    expect(again.sources).toEqual(body.sources);
  }, 30_000);
});
