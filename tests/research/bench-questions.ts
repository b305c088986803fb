/**
 * Questions of the bench's set (bench/research/set) as a user meets them: each result page on its
 * own local site (seven page servers, so each is its own host), the engine's answer replayed from
 * SearXNG with the other engines failing, and POST /v1/research asked of a real app.
 */
import type { ResearchResponse } from "../../core/operations/research/schema.ts";
import { pageHtml, type BenchPage, type BenchQuestion } from "../../bench/research/dataset.ts";
import { makeApp } from "../helpers/app.ts";
import { send, startPageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer } from "../helpers/replay-server.ts";
import { localPages, searxngBody } from "./fixtures.ts";

export interface BenchResearch {
  /** Every served page by its URL, with its labels (for bench/research/metric.ts's `score`). */
  pages: Map<string, BenchPage>;
  /** POST /v1/research for the question, its pages as the engine's answer; `json` adds fields such as `tier`. */
  ask(q: BenchQuestion, json?: Record<string, unknown>): Promise<ResearchResponse>;
  close(): Promise<void>;
}

export async function serveBenchQuestions(questions: BenchQuestion[]): Promise<BenchResearch> {
  const replay = await startReplayServer();
  const sites = await Promise.all(Array.from({ length: 7 }, () => startPageServer()));
  const pages = new Map<string, BenchPage>();
  for (const q of questions) {
    q.pages.forEach((p, i) => {
      const path = `/${q.id}/${i + 1}`;
      pages.set(`${sites[i]!.url}${path}`, p);
      sites[i]!.route(path, p.broken ? send("text/html", "<h1>error</h1>", 500) : send("text/html; charset=utf-8", pageHtml(p, `site${i + 1}.example`)));
    });
  }
  Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
  const t = await makeApp({ env: replayEnv(replay.url), pages: localPages() });
  t.clock.now = () => Date.now();
  const key = (await t.key("acme", ["research"], "enterprise")).secret;
  return {
    pages,
    async ask(q, json = {}) {
      replay.bodies.searxng = searxngBody(q.question, q.pages.map((p, i) => ({ url: `${sites[i]!.url}/${q.id}/${i + 1}`, title: p.title, content: p.sentences[0]!.text })));
      return (await (await t.request("/v1/research", { method: "POST", key, json: { query: q.question, ...json } })).json()) as ResearchResponse;
    },
    async close() {
      await t.close();
      await replay.close();
      await Promise.all(sites.map((s) => s.close()));
    },
  };
}
