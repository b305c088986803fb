/** POST /v1/research end to end: replayed engines, five real articles on a local page server, no LLM. */
import * as v from "valibot";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ResearchResponseSchema } from "../../core/operations/research/schema.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { localPages, QUESTION, searxngBody, serveArticles, summarySentences, supportShare, type Served } from "./fixtures.ts";

type Body = v.InferOutput<typeof ResearchResponseSchema>;

export function parseSse(text: string): { event: string; data: unknown }[] {
  return text
    .split(/\n\n+/)
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim() ?? "message";
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      return { event, data: JSON.parse(data) };
    });
}

describe("POST /v1/research", () => {
  let replay: ReplayServer;
  let site: PageServer;
  let served: Served[];
  let t: TestApp;
  let key: string;
  const ask = (json: unknown) => t.request("/v1/research", { method: "POST", key, json });

  beforeAll(async () => {
    replay = await startReplayServer();
    site = await startPageServer();
    served = await serveArticles();
    site.route("/broken", (_req, res) => res.writeHead(500, { "content-type": "text/html" }).end("<h1>oops</h1>"));
  });
  afterAll(async () => {
    await replay.close();
    await site.close();
    await Promise.all(served.map((s) => s.site.close()));
  });
  afterEach(async () => {
    for (const k of Object.keys(replay.faults)) delete replay.faults[k];
    for (const k of Object.keys(replay.bodies)) delete replay.bodies[k];
    await t?.close();
  });

  async function app(withBroken = true, routeOptions: { deadlineMs?: number } = {}) {
    // Only SearXNG answers, with links to the local pages: the other engines' recorded links are public.
    Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
    const results = served.map((s) => ({ url: s.url, title: s.title, content: s.snippet }));
    if (withBroken) results.splice(1, 0, { url: `${site.url}/broken`, title: "Impeachment inquiry hearings live", content: "Live coverage of the impeachment inquiry." });
    replay.bodies.searxng = searxngBody(QUESTION, results);
    t = await makeApp({ env: replayEnv(replay.url), pages: localPages(), options: { services: { deadlines: { research: routeOptions.deadlineMs } } } });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["research"])).secret;
  }

  const textOf = (body: Body, id: string) => {
    const url = body.sources.find((s) => s.id === id)!.url;
    return served.find((s) => s.url === url)?.text ?? "";
  };

  it("writes a report whose every sentence cites sources that contain its words; a failing page is skipped and reported", async () => {
    await app();
    const res = await ask({ query: QUESTION });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(v.safeParse(ResearchResponseSchema, body).success).toBe(true);
    expect(body.meta).toMatchObject({ query: QUESTION, synthesis: "extractive", results_count: 6, sources_count: 6, pages: { read: 5, failed: 1, skipped: 0 } });
    expect(body.meta.sub_queries.length).toBe(2);
    expect(body.meta.backends.searxng!.status).toBe("ok");
    expect(body.meta.backends.brave!.status).toBe("error");
    expect(body.sources.map((s) => s.id)).toEqual(["S1", "S2", "S3", "S4", "S5", "S6"]);
    for (const s of body.sources) expect(new URL(s.url).hostname).toBe("127.0.0.1");
    const ids = new Set(body.sources.map((s) => s.id));

    expect(body.report.findings.length).toBe(5);
    for (const f of body.report.findings) {
      expect(f.citations.length).toBeGreaterThan(0);
      for (const id of f.citations) {
        expect(ids.has(id)).toBe(true);
        expect(supportShare(f.text, textOf(body, id))).toBeGreaterThanOrEqual(0.6);
      }
      // the sentence is quoted from the first source it cites
      expect(f.citations.some((id) => supportShare(f.text, textOf(body, id)) >= 0.95)).toBe(true);
    }
    const sentences = summarySentences(body.report.summary);
    expect(sentences.length).toBe(3);
    for (const s of sentences) {
      expect(s.citations.length).toBeGreaterThan(0);
      for (const id of s.citations) expect(supportShare(s.text, textOf(body, id))).toBeGreaterThanOrEqual(0.6);
    }
    // no report from one site: the findings draw on several sources
    expect(new Set(body.report.findings.flatMap((f) => f.citations)).size).toBeGreaterThanOrEqual(3);
    // the broken page keeps its place as a search result, with the snippet as excerpt
    expect(body.sources.find((s) => s.url.endsWith("/broken"))!.excerpt).toBe("Live coverage of the impeachment inquiry.");
    expect(body.meta.tokens_used).toBeGreaterThan(0);

    // deterministic: the same question gives the same report
    const again = (await (await ask({ query: QUESTION })).json()) as Body;
    expect(again.report).toEqual(body.report);
  }, 30_000);

  it("counts once toward the quota in the research group although it searched several queries", async () => {
    await app();
    const before = replay.hits.searxng ?? 0;
    expect((await ask({ query: QUESTION })).status).toBe(200);
    expect((replay.hits.searxng ?? 0) - before).toBe(3);
    const usage = await (await t.request("/v1/usage", { key })).json();
    expect(usage.used).toBe(1);
    expect(usage.endpoints.research).toBe(1);
  }, 30_000);

  it("streams progress events and a final result equal to the JSON answer", async () => {
    await app();
    // A first request opens the failing engines' breakers, so both answers below see the same state.
    for (let i = 0; i < 5; i++) {
      const warm = (await (await ask({ query: `warm up ${i}`, tier: "basic" })).json()) as Body;
      if (["brave", "duckduckgo", "wikipedia"].every((id) => warm.meta.backends[id]!.status === "skipped")) break;
    }
    const json = (await (await ask({ query: QUESTION, tier: "detailed" })).json()) as Body;
    const res = await ask({ query: QUESTION, tier: "detailed", stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = parseSse(await res.text());
    const progress = events.filter((e) => e.event === "progress").map((e) => e.data as { stage: string; message: string; i?: number; n?: number });
    expect([...new Set(progress.map((p) => p.stage))]).toEqual(["planning", "searching", "reading", "ranking", "writing"]);
    expect(progress.find((p) => p.stage === "searching")!.message).toBe("searching 4 queries");
    expect(progress.some((p) => p.message === "reading 6 of 6 pages" && p.i === 6 && p.n === 6)).toBe(true);
    expect(events.filter((e) => e.event === "result").length).toBe(1);
    expect(events[events.length - 1]!.event).toBe("result");
    const streamed = events[events.length - 1]!.data as Body;
    const timeless = (b: Body) => ({
      ...b,
      meta: { ...b.meta, duration_ms: 0, backends: Object.fromEntries(Object.entries(b.meta.backends).map(([id, s]) => [id, { ...s, latency_ms: 0 }])) },
    });
    expect(timeless(streamed)).toEqual(timeless(json));
    expect(json.report.findings.length).toBe(8);
  }, 30_000);

  it("basic tier reads no page and writes from the snippets", async () => {
    await app();
    const hits = served.reduce((n, s) => n + s.site.hits.length, site.hits.length);
    const body = (await (await ask({ query: QUESTION, tier: "basic", max_sources: 3 })).json()) as Body;
    expect(served.reduce((n, s) => n + s.site.hits.length, site.hits.length)).toBe(hits);
    expect(body.sources.length).toBe(3);
    expect(body.meta.pages).toEqual({ read: 0, failed: 0, skipped: 0, unread: [] });
    for (const f of body.report.findings) for (const id of f.citations) {
      const snippet = body.sources.find((s) => s.id === id)!.excerpt ?? "";
      expect(supportShare(f.text, snippet)).toBeGreaterThanOrEqual(0.6);
    }
  }, 30_000);

  it("answers 400 naming the field for each violation", async () => {
    await app();
    const cases: [unknown, string][] = [
      [{ query: "   " }, "query"],
      [{ query: "x".repeat(501) }, "query"],
      [{ query: "q", tier: "deep" }, "tier"],
      [{ query: "q", max_sources: 0 }, "max_sources"],
      [{ query: "q", max_sources: 21 }, "max_sources"],
      [{ query: "q", max_sources: 2.5 }, "max_sources"],
      [{ query: "q", include_domains: ["not a host"] }, "include_domains.0"],
      [{ query: "q", exclude_domains: "example.org" }, "exclude_domains"],
      [{ query: "q", freshness: "decade" }, "freshness"],
      [{ query: "q", stream: "yes" }, "stream"],
      [{ query: "q", backends: ["searxng"] }, "backends"],
      [{}, "query"],
    ];
    for (const [json, field] of cases) {
      const res = await ask(json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      const err = (await res.json()).error;
      expect(err.code).toBe("invalid_request");
      expect(err.details.map((d: { field: string }) => d.field)).toContain(field);
      expect(err.message.startsWith(`${field}:`)).toBe(true);
    }
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(0);
  });

  it("every engine hanging is a 504 with each engine's status in error.backends, as a 502 has; so is a 502 for no usable result", async () => {
    await app(true, { deadlineMs: 2_000 });
    Object.assign(replay.faults, { duckduckgo: "hang", wikipedia: "hang", brave: "hang", searxng: "hang" });
    const res = await ask({ query: QUESTION });
    expect(res.status).toBe(504);
    const err = (await res.json()).error;
    expect(err.code).toBe("timeout");
    for (const id of ["duckduckgo", "wikipedia", "brave", "searxng"]) expect(err.backends[id], id).toMatchObject({ status: "timeout" });
    const streamed = parseSse(await (await ask({ query: "another question about impeachment", stream: true })).text());
    expect((streamed[streamed.length - 1]!.data as { error: { code: string; backends: Record<string, { status: string }> } }).error).toMatchObject({ code: "timeout", backends: { searxng: { status: "timeout" } } });
    for (const k of Object.keys(replay.faults)) delete replay.faults[k];
    await t.close();

    await app();
    const none = await ask({ query: QUESTION, include_domains: ["nowhere.example"] });
    expect(none.status).toBe(502);
    const noneErr = (await none.json()).error;
    expect(noneErr.message).toMatch(/no usable results/);
    expect(noneErr.backends.searxng).toMatchObject({ status: "ok" });
  }, 30_000);

  it("every engine failing is a 502 naming them (refunded); streamed, an error event", async () => {
    await app();
    Object.assign(replay.faults, { searxng: "500" });
    const res = await ask({ query: QUESTION });
    expect(res.status).toBe(502);
    const err = (await res.json()).error;
    expect(err.code).toBe("upstream_error");
    for (const id of ["duckduckgo", "wikipedia", "brave", "searxng"]) expect(err.message).toContain(id);
    expect(err.backends.searxng).toMatchObject({ status: "error" });
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(0);

    const streamed = await ask({ query: "another question about impeachment", stream: true });
    const events = parseSse(await streamed.text());
    const last = events[events.length - 1]!;
    expect(last.event).toBe("error");
    const e = (last.data as { error: { code: string; message: string; request_id: string } }).error;
    expect(e.code).toBe("upstream_error");
    expect(e.request_id).toBe(streamed.headers.get("x-request-id"));
    expect(e.request_id).toMatch(/^req_/);
    // The stream answered 200 before failing: the gateway gave its unit back all the same.
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(0);
  }, 30_000);

  it("a page that misses the deadline is skipped and reported, and the report comes from the others", async () => {
    await app(false, { deadlineMs: 3_000 });
    site.route("/slow", (_req, res) => setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end("<p>late</p>"), 15_000));
    const results = [{ url: `${site.url}/slow`, title: "Impeachment hearings, slowly", content: "A slow page about the impeachment inquiry hearings." }, ...served.map((s) => ({ url: s.url, title: s.title, content: s.snippet }))];
    replay.bodies.searxng = searxngBody(QUESTION, results);
    const t0 = Date.now();
    const body = (await (await ask({ query: QUESTION })).json()) as Body;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(body.meta.pages).toMatchObject({ read: 5, failed: 0, skipped: 1 });
    expect(body.meta.pages.unread).toEqual([{ id: expect.stringMatching(/^S\d+$/), url: `${site.url}/slow`, reason: "not read before the deadline" }]);
    expect(body.report.findings.length).toBe(5);
  }, 30_000);

  it("nothing readable: a 200 report that says so, with the search results as sources", async () => {
    await app(false);
    replay.bodies.searxng = searxngBody(QUESTION, [
      { url: `${site.url}/broken`, title: "Impeachment", content: "" },
      { url: `${site.url}/missing`, title: "Hearings", content: "" },
    ]);
    const res = await ask({ query: QUESTION });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.meta.pages).toMatchObject({ read: 0, failed: 2, skipped: 0 });
    expect(body.meta.pages.unread.map((u) => u.url).sort()).toEqual([`${site.url}/broken`, `${site.url}/missing`]);
    expect(body.report.findings).toEqual([]);
    expect(body.report.summary).toMatch(/No readable text/);
    expect(body.report.summary).toContain("[S1][S2]");
    expect(body.sources.map((s) => s.url)).toEqual([`${site.url}/broken`, `${site.url}/missing`]);
  }, 30_000);
});
