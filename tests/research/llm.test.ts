/** POST /v1/research with a model: a local fake OpenAI-compatible server on 127.0.0.1. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ResearchResponse } from "../../core/operations/research/schema.ts";
import { splitSentences } from "../../core/answers/synthesis.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { bestParagraphShare, localPages, QUESTION, searxngBody, serveArticles, summarySentences, supportShare, type Served } from "./fixtures.ts";

type Mode = "cite" | "hang" | "500";

interface FakeModel {
  url: string;
  mode: Mode;
  requests: { auth: string | undefined; body: { model: string; messages: { role: string; content: string }[] } }[];
  /** What the last synthesis answer claimed. */
  claim: { sentence: string; source: string; wrong: string } | null;
  close(): Promise<void>;
}

const words = (s: string) => new Set(s.toLowerCase().match(/[a-z]{4,}/g) ?? []);

/** Writes a report from the prompt's passages: one true sentence cited to its source and to an unrelated one, one invented sentence. */
function writeReport(prompt: string, fake: FakeModel): string {
  const blocks = [...prompt.matchAll(/^\[(S\d+)\][^\n]*\n((?:- [^\n]*\n?)+)/gm)].map((m) => ({ id: m[1]!, text: m[2]!.replace(/^- /gm, "") }));
  const a = blocks[0]!;
  const sentence = splitSentences(a.text).filter((s) => s.split(" ").length >= 12).sort((x, y) => y.length - x.length)[0]!;
  const mine = words(sentence);
  const overlap = (b: { text: string }) => [...mine].filter((w) => words(b.text).has(w)).length;
  const wrong = blocks.slice(1).sort((x, y) => overlap(x) - overlap(y))[0]!;
  const other = blocks.find((b) => b.id !== a.id && b.id !== wrong.id) ?? wrong;
  const second = splitSentences(other.text).find((s) => s.split(" ").length >= 8)!;
  fake.claim = { sentence, source: a.id, wrong: wrong.id };
  const cite = (s: string, ids: string[]) => `${s.replace(/[.!?]+$/, "")} ${ids.map((i) => `[${i}]`).join("")}.`;
  return JSON.stringify({
    summary: `${cite(sentence, [a.id])} Bananas grow on the surface of Mars every spring [${a.id}].`,
    findings: [cite(sentence, [a.id, wrong.id]), `The moon landing was staged in a studio in Nevada [${other.id}].`, cite(second, [other.id])],
  });
}

async function startFakeModel(): Promise<FakeModel> {
  const hanging = new Set<ServerResponse>();
  const fake: FakeModel = { url: "", mode: "cite", requests: [], claim: null, close: async () => {} };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw);
      fake.requests.push({ auth: req.headers.authorization, body });
      if (req.url !== "/v1/chat/completions") return res.writeHead(404).end();
      const system = body.messages[0].content as string;
      const reply = (content: string, tokens: number) =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }], usage: { total_tokens: tokens } }));
      if (/plan web research/.test(system)) return reply("Sondland testimony impeachment\n- impeachment hearings witnesses Ukraine aid\n", 40);
      if (fake.mode === "hang") return void hanging.add(res);
      if (fake.mode === "500") return res.writeHead(500, { "content-type": "application/json" }).end('{"error":"overloaded"}');
      return reply(writeReport(body.messages[1].content, fake), 900);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  fake.close = () => new Promise((r) => { for (const res of hanging) res.destroy(); server.closeAllConnections(); server.close(() => r()); });
  return fake;
}

describe("POST /v1/research with QUARRY_LLM_URL", () => {
  let replay: ReplayServer;
  let served: Served[];
  let model: FakeModel;
  let t: TestApp;
  let key: string;
  const ask = (json: unknown) => t.request("/v1/research", { method: "POST", key, json });

  beforeAll(async () => {
    replay = await startReplayServer();
    served = await serveArticles();
    model = await startFakeModel();
  });
  afterAll(async () => {
    await replay.close();
    await model.close();
    await Promise.all(served.map((s) => s.site.close()));
  });
  afterEach(async () => {
    for (const k of Object.keys(replay.faults)) delete replay.faults[k];
    for (const k of Object.keys(replay.bodies)) delete replay.bodies[k];
    await t?.close();
  });

  async function app(mode: Mode) {
    model.mode = mode;
    model.requests.length = 0;
    Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
    replay.bodies.searxng = searxngBody(QUESTION, served.map((s) => ({ url: s.url, title: s.title, content: s.snippet })));
    const env = { ...replayEnv(replay.url), QUARRY_LLM_URL: model.url, QUARRY_LLM_MODEL: "fake-model", QUARRY_LLM_KEY: "test-llm-key" };
    t = await makeApp({ env, pages: localPages(), options: { services: { llmTimeoutMs: 1_000 } } });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["research"])).secret;
  }
  const textOf = (body: ResearchResponse, id: string) => served.find((s) => s.url === body.sources.find((x) => x.id === id)!.url)!.text;

  it("plans with the model, keeps its supported sentences and drops citations and sentences the sources do not support", async () => {
    await app("cite");
    const body = (await (await ask({ query: QUESTION })).json()) as ResearchResponse;
    expect(body.meta.synthesis).toBe("llm");
    expect(body.meta.llm_error).toBeUndefined();
    expect(body.meta.sub_queries).toEqual(["Sondland testimony impeachment", "impeachment hearings witnesses Ukraine aid"]);
    expect(model.requests.length).toBe(2);
    for (const r of model.requests) {
      expect(r.auth).toBe("Bearer test-llm-key");
      expect(r.body.model).toBe("fake-model");
    }
    const claim = model.claim!;
    // the wrongly cited source really does not state the sentence; the right one does
    expect(bestParagraphShare(claim.sentence, textOf(body, claim.wrong))).toBeLessThan(0.5);
    expect(supportShare(claim.sentence, textOf(body, claim.source))).toBeGreaterThan(0.9);
    const kept = body.report.findings.find((f) => f.text === claim.sentence.replace(/[.!?]+$/, "") + ".")!;
    expect(kept.citations).toEqual([claim.source]);
    expect(JSON.stringify(body.report)).not.toMatch(/Bananas|moon landing/);
    expect(body.report.findings.length).toBe(2);
    for (const f of body.report.findings) for (const id of f.citations) expect(supportShare(f.text, textOf(body, id))).toBeGreaterThanOrEqual(0.5);
    const summary = summarySentences(body.report.summary);
    expect(summary.length).toBe(1);
    expect(summary[0]!.citations).toEqual([claim.source]);
    // model tokens (40 planning + 900 writing) are counted
    expect(body.meta.tokens_used).toBeGreaterThan(940);
  }, 30_000);

  it("falls back to the extractive report when the model times out, and says so", async () => {
    await app("hang");
    const t0 = Date.now();
    const body = (await (await ask({ query: QUESTION })).json()) as ResearchResponse;
    expect(Date.now() - t0).toBeLessThan(8_000);
    expect(body.meta.synthesis).toBe("extractive");
    expect(body.meta.llm_error).toMatch(/did not answer within 1000 ms/);
    expect(body.report.findings.length).toBe(5);
    for (const f of body.report.findings) for (const id of f.citations) expect(supportShare(f.text, textOf(body, id))).toBeGreaterThanOrEqual(0.6);
  }, 30_000);

  it("falls back to the extractive report when the model errors", async () => {
    await app("500");
    const body = (await (await ask({ query: QUESTION, stream: true })).text());
    const result = JSON.parse(body.split("event: result\ndata: ")[1]!.split("\n")[0]!) as ResearchResponse;
    expect(result.meta.synthesis).toBe("extractive");
    expect(result.meta.llm_error).toMatch(/HTTP 500/);
    expect(result.report.summary).not.toBe("");
  }, 30_000);
});
