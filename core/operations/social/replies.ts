/**
 * Best comments and answers for the top sources, where the platform gives them in one cheap
 * call: HN's items endpoint (one call per story) and Stack Exchange's answers of several
 * questions (one call in all). Optional and bounded: a few sources, a short timeout, and any
 * failure just leaves the replies out.
 */
import type { Clock, FetchPort } from "../../ports.ts";
import type { BackendRegistry } from "../../backends/registry.ts";
import type { Timers } from "../../backends/runner.ts";
import type { UpstreamResponse } from "../../backends/types.ts";
import { buildItemRequest, parseItemReplies } from "../../backends/social/hackernews.ts";
import { buildAnswersRequest, parseAnswers } from "../../backends/social/stackexchange.ts";
import type { SocialItem, SocialReply } from "../../backends/social/types.ts";
import { lexicalScores } from "../../ranking/lexical.ts";

export interface RepliesDeps {
  registry: BackendRegistry;
  fetch: FetchPort;
  clock: Clock;
  timers: Timers;
}

export interface RepliesOptions {
  query: string;
  /** Latest clock time the calls may take. */
  deadline: number;
  /** How many of the given sources get replies (default 3). */
  sources?: number;
  /** Replies per source (default 3). */
  perSource?: number;
  /** Longest single call, ms (default 2500). */
  timeoutMs?: number;
}

export const DEFAULT_TIMERS: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** One upstream call within `ms`; null on any failure (it is optional). */
async function fetchWithin(deps: RepliesDeps, request: Request, ms: number): Promise<UpstreamResponse | null> {
  if (ms <= 0) return null;
  const controller = new AbortController();
  let handle: unknown;
  const timeout = new Promise<null>((resolve) => {
    handle = deps.timers.set(() => {
      resolve(null);
      controller.abort();
    }, ms);
  });
  const call = (async () => {
    try {
      const res = await deps.fetch(request, { signal: controller.signal });
      return { status: res.status, headers: res.headers, body: await res.text() };
    } catch {
      return null;
    }
  })();
  const out = await Promise.race([call, timeout]);
  deps.timers.clear(handle);
  return out;
}

/** HN keeps no vote counts on comments in the API any more: prefer points, then query match, then substance. */
function bestHnReplies(replies: SocialReply[], query: string, n: number): SocialReply[] {
  const lexical = lexicalScores(query, replies.map((r) => ({ title: "", content: r.text })));
  return replies
    .map((reply, i) => ({ reply, i, key: (reply.score ?? 0) / 100 + lexical[i]! + Math.min(1, reply.text.length / 600) * 0.2 }))
    .sort((a, b) => b.key - a.key || a.i - b.i)
    .slice(0, n)
    .map((x) => x.reply);
}

function seQuestionId(item: SocialItem): number | null {
  const id = Number(item.id.split(":").pop());
  return Number.isInteger(id) && id > 0 ? id : null;
}

/** Replies by source id for the first `sources` items that can have them cheaply. */
export async function fetchTopReplies(deps: RepliesDeps, items: readonly SocialItem[], opts: RepliesOptions): Promise<Map<string, SocialReply[]>> {
  const out = new Map<string, SocialReply[]>();
  const perSource = opts.perSource ?? 3;
  const chosen = items
    .filter((it) => (it.platform === "hackernews" && it.kind === "story" && (it.engagement.comments ?? 1) > 0) ||
      (it.platform === "stackexchange" && (it.engagement.answers ?? 1) > 0))
    .slice(0, opts.sources ?? 3);
  if (!chosen.length) return out;
  const ms = Math.min(opts.timeoutMs ?? 2_500, opts.deadline - deps.clock.now());
  if (ms <= 0) return out;

  const calls: Promise<void>[] = [];
  const hn = deps.registry.get("hackernews");
  if (hn?.enabled) {
    for (const item of chosen.filter((it) => it.platform === "hackernews")) {
      calls.push(
        fetchWithin(deps, buildItemRequest(item.id.slice("hn:".length), hn.config), ms).then((res) => {
          const replies = res ? parseItemReplies(res) : null;
          if (replies?.length) out.set(item.id, bestHnReplies(replies, opts.query, perSource));
        }),
      );
    }
  }
  const se = deps.registry.get("stackexchange");
  const questions = chosen.filter((it) => it.platform === "stackexchange");
  if (se?.enabled && questions.length) {
    const urls = new Map<number, string>();
    for (const q of questions) {
      const id = seQuestionId(q);
      if (id !== null) urls.set(id, q.url);
    }
    calls.push(
      fetchWithin(deps, buildAnswersRequest([...urls.keys()], se.config), ms).then((res) => {
        const byQuestion = res ? parseAnswers(res, urls) : null;
        if (!byQuestion) return;
        for (const q of questions) {
          const answers = byQuestion.get(seQuestionId(q) ?? -1);
          if (answers?.length) out.set(q.id, answers.slice(0, perSource));
        }
      }),
    );
  }
  await Promise.all(calls);
  return out;
}
