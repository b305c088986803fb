/**
 * POST /v1/social/research as an operation over the ports: ask the requested
 * platforms under one deadline (backends/runner.ts) → score, merge and cap (rank.ts) → add
 * text and best replies within the tier's token budget → extractive report. A platform that
 * is not configured, fails, times out or is rate limited is reported in `meta.platforms` and
 * the answer comes from the rest; when none answers, it throws the 502/504 ApiError with every
 * platform's status. Asking only for platforms this server has not configured is the caller's
 * or the operator's to fix: a 400 naming the missing variables, counted toward nothing.
 */
import { loadLibraries } from "../../lazy.ts";
import { ApiError } from "../../errors.ts";
import type { Clock, FetchPort } from "../../ports.ts";
import type { BackendRegistry } from "../../backends/registry.ts";
import { failedRunExtra, type BackendRunner, type BackendRunStatus, type Timers } from "../../backends/runner.ts";
import { SOCIAL_PLATFORMS, type SocialItem, type SocialPlatform, type SocialReply } from "../../backends/social/types.ts";
import { excerpt, TIER_TOKENS, tokenCount } from "./excerpt.ts";
import { rankSocial } from "./rank.ts";
import { DEFAULT_TIMERS, fetchTopReplies } from "./replies.ts";
import { buildReport } from "./report.ts";
import type { SocialResearchAnswer, SocialResearchInput, SocialSource } from "./schema.ts";

export interface SocialResearchDeps {
  registry: BackendRegistry;
  /** Its fetch signs in where needed (createSocialBackends). */
  runner: BackendRunner;
  /** Plain outbound fetch, for the optional replies. */
  fetch: FetchPort;
  clock: Clock;
  timers?: Timers;
  /** Whole-request deadline, ms (default 10000); searching may use 75% of it. */
  deadlineMs?: number;
}

export type PlatformStatus = SocialResearchAnswer["meta"]["platforms"][string];

const SEARCH_SHARE = 0.75;
/** Replies are worth fetching only with this much time left, ms. */
const REPLIES_MIN_MS = 300;
const REPLY_SHARE = 4; // each reply gets a quarter of the tier's per-source budget

function statusOf(run: BackendRunStatus | undefined): PlatformStatus {
  if (!run) return { status: "error", returned: 0, kept: 0, latency_ms: 0, reason: "not run" };
  const base = { returned: run.results, kept: 0, latency_ms: run.latency_ms };
  const retry = run.retry_at ? { retry_at: run.retry_at } : {};
  switch (run.status) {
    case "ok":
      return { status: "ok", ...base };
    case "timeout":
    case "disabled":
      return { status: run.status, ...base, reason: run.error ?? run.status, ...retry };
    default: // error, and "skipped" = suspended by the circuit breaker after recent failures
      return { status: "error", ...base, reason: run.error ?? "failed", ...retry };
  }
}

function failureList(platforms: Record<string, PlatformStatus>): string {
  return Object.entries(platforms).map(([name, p]) => `${name} (${p.reason ?? p.status})`).join(", ");
}

export async function socialResearch(deps: SocialResearchDeps, req: SocialResearchInput): Promise<SocialResearchAnswer> {
  await loadLibraries();
  const { registry, runner, clock } = deps;
  const startedAt = clock.now();
  const deadlineMs = deps.deadlineMs ?? 10_000;

  const known = registry.ids("social").filter((id): id is SocialPlatform => (SOCIAL_PLATFORMS as readonly string[]).includes(id));
  // Asked-for platforms in the caller's order; by default every social platform, so the
  // unconfigured ones are reported as disabled rather than left out.
  const wanted = req.platforms ? [...new Set(req.platforms as SocialPlatform[])] : known;
  const platforms: Record<string, PlatformStatus> = {};
  const runnable: SocialPlatform[] = [];
  for (const id of wanted) {
    const entry = registry.get(id);
    // Placeholders of runnable platforms keep the reported order; the run fills them in.
    if (!entry) platforms[id] = { status: "disabled", returned: 0, kept: 0, latency_ms: 0, reason: "not registered" };
    else if (!entry.enabled) platforms[id] = { status: "disabled", returned: 0, kept: 0, latency_ms: 0, reason: entry.reason };
    else {
      platforms[id] = { status: "timeout", returned: 0, kept: 0, latency_ms: 0 };
      runnable.push(id);
    }
  }
  if (!runnable.length) {
    throw new ApiError("invalid_request", `No requested platform is configured on this server: ${failureList(platforms)}.`, { fields: { platforms } });
  }

  const perPlatform = Math.min(50, Math.max(10, req.max_sources * 2));
  const run = await runner.run<SocialItem>({
    query: { query: req.query, maxResults: perPlatform, language: "en", freshness: req.freshness ?? null },
    backends: runnable,
    kind: "social",
    deadline: startedAt + deadlineMs * SEARCH_SHARE,
  });
  for (const id of runnable) platforms[id] = statusOf(run.backends[id]);

  const answered = runnable.filter((id) => platforms[id]!.status === "ok");
  if (!answered.length) {
    const failed = Object.fromEntries(runnable.map((id) => [id, platforms[id]!]));
    const allTimedOut = runnable.every((id) => platforms[id]!.status === "timeout");
    // Each platform suspended (a rate limit's reset, a back-off): say when the first is asked again.
    const { retryAfter, headers } = failedRunExtra(Object.fromEntries(runnable.map((id) => [id, run.backends[id]!])), clock.now());
    throw new ApiError(allTimedOut ? "timeout" : "upstream_error", `Every requested platform failed: ${failureList(failed)}.`, { fields: { platforms }, ...(retryAfter === undefined ? {} : { retryAfter, headers }) });
  }

  const ranked = rankSocial(run.results, { query: req.query, now: clock.now(), freshness: req.freshness ?? null, maxSources: req.max_sources });
  for (const s of ranked.sources) platforms[s.item.platform]!.kept++;

  const budget = TIER_TOKENS[req.tier];
  let tokensUsed = 0;
  let replies = new Map<string, SocialReply[]>();
  const deadline = startedAt + deadlineMs;
  if (budget > 0 && deadline - clock.now() >= REPLIES_MIN_MS) {
    replies = await fetchTopReplies(
      { registry, fetch: deps.fetch, clock, timers: deps.timers ?? DEFAULT_TIMERS },
      ranked.sources.map((s) => s.item),
      { query: req.query, deadline: deadline - 100 },
    );
  }

  const sources: SocialSource[] = ranked.sources.map(({ item, scores, also }) => {
    let text: string | null = null;
    if (budget > 0 && item.text) {
      const cut = excerpt(item.text, req.query, budget, req.tier !== "full");
      text = cut.text;
      tokensUsed += cut.tokens;
    }
    const top = (replies.get(item.id) ?? []).map((r) => {
      const cut = excerpt(r.text, req.query, Math.floor(budget / REPLY_SHARE));
      tokensUsed += cut.tokens;
      return { ...r, text: cut.text };
    });
    return {
      id: item.id,
      platform: item.platform,
      kind: item.kind,
      title: item.title,
      snippet: item.snippet,
      text,
      url: item.url,
      linked_url: item.linked_url,
      author: item.author,
      community: item.community,
      published_at: item.published_at,
      engagement: item.engagement,
      scores,
      also_discussed_on: also.map((a) => ({ platform: a.platform, id: a.id, url: a.url })),
      top_replies: top,
    };
  });

  const report = buildReport(
    req.query,
    sources.map((s) => ({ id: s.id, title: s.title, text: s.text ?? s.snippet, score: s.scores.final })),
  );
  tokensUsed += tokenCount(report.summary) + report.themes.reduce((n, t) => n + tokenCount(t.summary), 0);

  return {
    meta: {
      query: req.query,
      tier: req.tier,
      results_count: sources.length,
      tokens_used: tokensUsed,
      duration_ms: Math.max(0, Math.round(clock.now() - startedAt)),
      platforms,
    },
    sources,
    report,
  };
}
