import { describe, expect, it } from "vitest";
import { createSocialBackends } from "../../core/backends/social/registry.ts";
import type { BackendsSettings } from "../../core/backends/registry.ts";
import { tokenCount } from "../../core/operations/social/excerpt.ts";
import { ApiError } from "../../core/errors.ts";
import { socialResearch } from "../../core/operations/social/social.ts";
import { SocialResearchBody, type SocialResearchAnswer } from "../../core/operations/social/schema.ts";
import { validOrThrow } from "../../core/gateway/validate.ts";
import { FakeClock } from "../backends/helpers.ts";
import { hanging, replay, type ReplayRoute } from "./replay.ts";

const CREDENTIALS: BackendsSettings = {
  reddit: { key: "client-id", token: "client-secret" },
  bluesky: { key: "quarry.bsky.social", token: "app-pass-word" },
  mastodon: { url: "https://mastodon.example", token: "masto-token" },
};

/** SYNTHETIC answers for whatever question ids are asked (documented answer type). */
function seAnswers(req: Request): Response {
  const ids = new URL(req.url).pathname.split("/")[3]!.split(";").map(Number);
  const items = ids.map((id, i) => ({ answer_id: 900 + i, question_id: id, score: 5, is_accepted: i === 0, body: `<p>Answer to ${id}: set the width explicitly.</p>` }));
  return Response.json({ items, has_more: false, quota_max: 300, quota_remaining: 290 });
}

const UPSTREAMS: ReplayRoute[] = [
  { prefix: "hn.algolia.com/api/v1/search", reply: "hackernews/algolia_search__tags-story.json" },
  { prefix: "hn.algolia.com/api/v1/items/", reply: "hackernews/algolia_items_17.json" },
  { prefix: "api.stackexchange.com/2.3/search/advanced", reply: "stackexchange/questions_tagged_html_2016.json" },
  { prefix: "api.stackexchange.com/2.3/questions/", reply: seAnswers },
  { prefix: "api.github.com/search/issues", reply: "github/search_issues_sesame.json" },
  { prefix: "lemmy.world/api/v3/search", reply: "lemmy/api_v3_search_posts_synthetic.json" },
  { method: "POST", prefix: "www.reddit.com/api/v1/access_token", reply: () => Response.json({ access_token: "reddit-app-token", token_type: "bearer", expires_in: 86400, scope: "*" }) },
  { prefix: "oauth.reddit.com/search", reply: "reddit/oauth_r_all_search_praw_oauth_search.json" },
  { method: "POST", prefix: "bsky.social/xrpc/com.atproto.server.createSession", reply: () => Response.json({ did: "did:plc:q", handle: "quarry.bsky.social", accessJwt: "a.b.c", refreshJwt: "r" }) },
  { prefix: "bsky.social/xrpc/app.bsky.feed.searchPosts", reply: hanging },
  {
    prefix: "mastodon.example/api/v2/search",
    reply: () => new Response('{"error":"Too many requests"}', { status: 429, headers: { "x-ratelimit-reset": "2026-11-22T12:05:00.000Z", date: "Sun, 22 Nov 2026 12:00:00 GMT" } }),
  },
];

async function research(body: unknown, opts: { settings?: BackendsSettings; routes?: ReplayRoute[]; advance?: number } = {}) {
  const clock = new FakeClock();
  const up = replay(opts.routes ?? UPSTREAMS);
  const { registry, runner } = createSocialBackends(opts.settings ?? CREDENTIALS, { fetch: up.fetch, clock, timers: clock });
  // As the route does: the gateway validates the body, then the operation runs.
  const deps = { registry, runner, fetch: up.fetch, clock, timers: clock, deadlineMs: 4_000 };
  const pending = Promise.resolve()
    .then(() => socialResearch(deps, validOrThrow(SocialResearchBody, body)))
    .then(
      (value) => ({ ok: true as const, value }),
      (err: ApiError) => ({ ok: false as const, error: { code: err.code, message: err.message, details: err.extra.details, ...err.extra.fields } }),
    );
  await clock.advance(opts.advance ?? 5_000);
  const outcome = await pending;
  return { outcome, up, clock };
}

function answerOf(outcome: Awaited<ReturnType<typeof research>>["outcome"]): SocialResearchAnswer {
  if (!outcome.ok) throw new Error(`expected an answer, got ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.value;
}

describe("socialResearch end to end (replayed upstreams)", () => {
  it("answers from the platforms that work and reports the hanging and the rate-limited ones", async () => {
    const { outcome, up } = await research({ query: "apple steve jobs", max_sources: 12 });
    const answer = answerOf(outcome);
    const { platforms } = answer.meta;
    expect(Object.keys(platforms)).toEqual(["hackernews", "stackexchange", "github", "lemmy", "reddit", "bluesky", "mastodon"]);
    for (const id of ["hackernews", "stackexchange", "github", "lemmy", "reddit"]) expect(platforms[id]!.status, id).toBe("ok");
    expect(platforms.hackernews).toMatchObject({ returned: 1, kept: 1 });
    expect(platforms.stackexchange!.returned).toBe(24); // perPlatform = 2 × max_sources
    expect(platforms.bluesky).toMatchObject({ status: "timeout", returned: 0, kept: 0, reason: expect.stringContaining("deadline") });
    expect(platforms.mastodon).toMatchObject({ status: "error", returned: 0, reason: expect.stringMatching(/rate_limited: Mastodon answered 429/) });

    expect(answer.meta.results_count).toBe(answer.sources.length);
    expect(answer.sources.length).toBe(12);
    expect(Object.values(platforms).reduce((n, p) => n + p.kept, 0)).toBe(12);
    const finals = answer.sources.map((s) => s.scores.final);
    expect(finals).toEqual([...finals].sort((a, b) => b - a));
    for (const s of answer.sources) for (const v of Object.values(s.scores)) expect(v >= 0 && v <= 1).toBe(true);
    expect(answer.sources[0]).toMatchObject({ id: "hn:3078128", linked_url: "http://www.apple.com/stevejobs/" });

    // Summary tier: the HN story gets its top comments from the items endpoint, SE questions their answers.
    expect(answer.sources[0]!.top_replies.map((r) => r.id)).toEqual(["hn:1079", "hn:454426"]); // by points (4, 1)
    const withAnswers = answer.sources.filter((s) => s.platform === "stackexchange" && s.top_replies.length);
    expect(withAnswers.length).toBeGreaterThan(0);
    expect(up.log.filter((l) => l.includes("/2.3/questions/"))).toHaveLength(1); // one call for all questions

    // Reddit signed in once, and searched with the app token; bluesky signed in and then hung.
    expect(up.log.filter((l) => l.startsWith("POST www.reddit.com"))).toHaveLength(1);
    expect(up.requests.find((r) => r.url.startsWith("https://oauth.reddit.com/search"))!.headers.get("authorization")).toBe("Bearer reddit-app-token");
    expect(up.requests.find((r) => r.url.includes("searchPosts"))!.headers.get("authorization")).toBe("Bearer a.b.c");

    // Every cited id exists; tokens_used is the extracted text in the answer.
    const ids = new Set(answer.sources.map((s) => s.id));
    const { report } = answer;
    expect(report.themes.length).toBeGreaterThan(0);
    for (const c of [...report.citations, ...report.themes.flatMap((t) => t.citations)]) {
      for (const id of c.source_ids) expect(ids.has(id), id).toBe(true);
    }
    for (const t of report.themes) for (const id of t.source_ids) expect(ids.has(id)).toBe(true);
    for (const sentence of report.summary.split(/(?<=\])\s+/)) expect(sentence).toMatch(/\[[^\]]+\]$/);
    const counted =
      answer.sources.reduce((n, s) => n + tokenCount(s.text ?? "") + s.top_replies.reduce((m, r) => m + tokenCount(r.text), 0), 0) +
      tokenCount(report.summary) + report.themes.reduce((n, t) => n + tokenCount(t.summary), 0);
    expect(answer.meta.tokens_used).toBe(counted);
    for (const s of answer.sources) expect(tokenCount(s.text ?? "")).toBeLessThanOrEqual(200);
  });

  it("tier basic returns metadata only and fetches no replies", async () => {
    const { outcome, up } = await research({ query: "apple", tier: "basic", platforms: ["hackernews", "stackexchange"] });
    const answer = answerOf(outcome);
    expect(Object.keys(answer.meta.platforms)).toEqual(["hackernews", "stackexchange"]);
    expect(answer.sources.every((s) => s.text === null && s.top_replies.length === 0)).toBe(true);
    expect(up.log.some((l) => l.includes("/items/") || l.includes("/questions/"))).toBe(false);
    expect(answer.meta.tokens_used).toBe(tokenCount(answer.report.summary) + answer.report.themes.reduce((n, t) => n + tokenCount(t.summary), 0));
  });

  it("reports a requested platform that is not configured as disabled, with the reason", async () => {
    const { outcome } = await research({ query: "apple", platforms: ["mastodon", "hackernews", "hackernews"] }, { settings: {} });
    const answer = answerOf(outcome);
    expect(answer.meta.platforms).toEqual({
      mastodon: { status: "disabled", returned: 0, kept: 0, latency_ms: 0, reason: "no base URL configured (QUARRY_MASTODON_URL)" },
      hackernews: expect.objectContaining({ status: "ok", returned: 1, kept: 1 }),
    });
  });

  it("filters by freshness exactly, asking date-sorted endpoints", async () => {
    const routes: ReplayRoute[] = [
      ...UPSTREAMS.filter((r) => !r.prefix.startsWith("mastodon")),
      { prefix: "mastodon.example/api/v2/search", reply: "mastodon/api_v2_search_halcy_mastodon_social.json" },
    ];
    const { outcome, up } = await research({ query: "sample", freshness: "year", platforms: ["hackernews", "mastodon"] }, { routes });
    const answer = answerOf(outcome);
    expect(up.log.some((l) => l.startsWith("GET hn.algolia.com/api/v1/search_by_date?"))).toBe(true);
    expect(answer.meta.platforms.hackernews).toMatchObject({ status: "ok", returned: 1, kept: 0 }); // from 2011
    expect(answer.sources.map((s) => s.platform)).toEqual(["mastodon", "mastodon"]);
  });

  it("fails with upstream_error naming every platform when all fail", async () => {
    const routes: ReplayRoute[] = [
      { prefix: "hn.algolia.com", reply: () => new Response("oops", { status: 500 }) },
      { prefix: "api.github.com", reply: () => new Response('{"message":"API rate limit exceeded"}', { status: 403, headers: { "x-ratelimit-remaining": "0" } }) },
    ];
    const { outcome } = await research({ query: "x", platforms: ["hackernews", "github"] }, { routes });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.code).toBe("upstream_error");
    expect(outcome.error.message).toMatch(/hackernews \(http: HN Algolia answered HTTP 500\)/);
    expect(outcome.error.message).toMatch(/github \(rate_limited: GitHub rate limit reached/);
  });

  it("fails with timeout when every platform hangs past the deadline", async () => {
    const routes: ReplayRoute[] = [{ prefix: "hn.algolia.com", reply: hanging }, { prefix: "lemmy.world", reply: hanging }];
    const { outcome } = await research({ query: "x", platforms: ["hackernews", "lemmy"] }, { routes });
    expect(!outcome.ok && outcome.error).toMatchObject({ code: "timeout", message: expect.stringContaining("hackernews (timeout") });
  });

  it("refuses a request for platforms this server has not configured (naming the variables), and an invalid body", async () => {
    const none = await research({ query: "x", platforms: ["reddit", "bluesky"] }, { settings: {} });
    expect(!none.outcome.ok && none.outcome.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("reddit (no token configured (QUARRY_REDDIT_TOKEN))") });
    const bad = await research({ query: "x", platforms: ["friendster"], tier: "huge" });
    expect(!bad.outcome.ok && bad.outcome.error).toMatchObject({
      code: "invalid_request",
      details: [{ field: "platforms.0", message: expect.any(String) }, { field: "tier", message: expect.any(String) }],
    });
    expect(bad.up.log).toEqual([]);
  });
});
