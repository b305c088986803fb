import { describe, expect, it } from "vitest";
import { authenticate, createTokenCache, withPlatformAuth } from "../../core/backends/social/auth.ts";
import { blueskyAuth } from "../../core/backends/social/bluesky.ts";
import { createSocialBackends } from "../../core/backends/social/registry.ts";
import { TOKEN_EXCHANGES } from "../../core/backends/catalogue.ts";
import { createRegistry } from "../../core/backends/registry.ts";
import { SOCIAL_BACKENDS } from "../../core/backends/catalogue.ts";
import { reddit, redditAuth } from "../../core/backends/social/reddit.ts";
import { FakeClock, query } from "../backends/helpers.ts";
import { replay } from "./replay.ts";

const REDDIT = { baseUrl: "https://oauth.reddit.com", key: "id", token: "secret" };

function tokenServer(answers: (() => Response)[]) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    fetch: async () => {
      const make = answers[Math.min(calls, answers.length - 1)]!;
      calls++;
      return make();
    },
  };
}

describe("authenticate + token cache", () => {
  it("exchanges once, reuses the token until a minute before expiry, then exchanges again", async () => {
    const clock = new FakeClock();
    const server = tokenServer([() => Response.json({ access_token: "t1", expires_in: 3600 }), () => Response.json({ access_token: "t2", expires_in: 3600 })]);
    const cache = createTokenCache();
    expect(await authenticate(redditAuth, server.fetch, REDDIT, cache, clock)).toMatchObject({ ok: true, token: "t1" });
    await clock.advance(3_500_000);
    expect(await authenticate(redditAuth, server.fetch, REDDIT, cache, clock)).toMatchObject({ token: "t1" });
    expect(server.calls).toBe(1);
    await clock.advance(60_000); // within the last minute of the token's life
    expect(await authenticate(redditAuth, server.fetch, REDDIT, cache, clock)).toMatchObject({ token: "t2" });
    expect(server.calls).toBe(2);
  });

  it("shares one exchange between concurrent requests", async () => {
    const clock = new FakeClock();
    const server = tokenServer([() => Response.json({ access_token: "t", expires_in: 60 * 60 })]);
    const cache = createTokenCache();
    const all = await Promise.all([1, 2, 3].map(() => authenticate(redditAuth, server.fetch, REDDIT, cache, clock)));
    expect(all.every((o) => o.ok && o.token === "t")).toBe(true);
    expect(server.calls).toBe(1);
  });

  it("remembers a refused sign-in for a minute, and does not cache transient trouble", async () => {
    const clock = new FakeClock();
    const refused = tokenServer([() => new Response('{"error":"AuthenticationRequired","message":"Invalid identifier or password"}', { status: 401 })]);
    const cache = createTokenCache();
    const cfg = { baseUrl: "https://bsky.social", key: "h", token: "wrong" };
    for (let i = 0; i < 3; i++) expect((await authenticate(blueskyAuth, refused.fetch, cfg, cache, clock)).ok).toBe(false);
    expect(refused.calls).toBe(1);
    await clock.advance(61_000);
    await authenticate(blueskyAuth, refused.fetch, cfg, cache, clock);
    expect(refused.calls).toBe(2);

    const flaky = tokenServer([() => new Response("oops", { status: 503 })]);
    await authenticate(redditAuth, flaky.fetch, REDDIT, createTokenCache(), clock);
    const again = createTokenCache();
    await authenticate(redditAuth, flaky.fetch, REDDIT, again, clock);
    await authenticate(redditAuth, flaky.fetch, REDDIT, again, clock);
    expect(flaky.calls).toBe(3);

    const down = async () => Promise.reject(new TypeError("fetch failed"));
    await expect(authenticate(redditAuth, down, REDDIT, createTokenCache(), clock)).rejects.toThrow("fetch failed");
  });
});

describe("withPlatformAuth", () => {
  it("signs only the platform's search requests, even when every upstream shares one replay origin", async () => {
    const base = "http://127.0.0.1:9000";
    const up = replay([
      { method: "POST", prefix: "127.0.0.1:9000/api/v1/access_token", reply: () => Response.json({ access_token: "app-token", expires_in: 86400 }) },
      { prefix: "127.0.0.1:9000/search", reply: "reddit/oauth_r_all_search_praw_oauth_search.json" },
      { prefix: "127.0.0.1:9000/api/v1/search", reply: "hackernews/algolia_search__tags-story.json" },
    ]);
    const registry = createRegistry({ reddit: { url: base, key: "id", token: "secret" }, hackernews: { url: base } }, SOCIAL_BACKENDS);
    const fetch = withPlatformAuth(up.fetch, new FakeClock(), registry, TOKEN_EXCHANGES);
    const cfg = { baseUrl: base, key: "id", token: "secret" };
    await fetch(reddit.buildRequest(query(), cfg));
    await fetch(reddit.buildRequest(query(), cfg));
    await fetch(new Request(`${base}/api/v1/search?query=x`));
    expect(up.log.map((l) => l.split("?")[0])).toEqual([
      "POST 127.0.0.1:9000/api/v1/access_token",
      "GET 127.0.0.1:9000/search",
      "GET 127.0.0.1:9000/search",
      "GET 127.0.0.1:9000/api/v1/search",
    ]);
    expect(up.requests.map((r) => r.headers.get("authorization"))).toEqual([`Basic ${btoa("id:secret")}`, "Bearer app-token", "Bearer app-token", null]);
  });

  it("drops a token the platform rejects, and reports a failed sign-in to the parser", async () => {
    let searches = 0;
    let exchanges = 0;
    const up = replay([
      { method: "POST", prefix: "www.reddit.com/api/v1/access_token", reply: () => Response.json({ access_token: `t${++exchanges}`, expires_in: 86400 }) },
      { prefix: "oauth.reddit.com/search", reply: () => new Response("{}", { status: ++searches === 1 ? 401 : 200 }) },
    ]);
    const registry = createRegistry({ reddit: { key: "id", token: "secret" } }, SOCIAL_BACKENDS);
    const fetch = withPlatformAuth(up.fetch, new FakeClock(), registry, TOKEN_EXCHANGES);
    expect((await fetch(reddit.buildRequest(query(), REDDIT))).status).toBe(401);
    expect((await fetch(reddit.buildRequest(query(), REDDIT))).status).toBe(200);
    expect(up.requests.filter((r) => r.url.includes("/search")).map((r) => r.headers.get("authorization"))).toEqual(["Bearer t1", "Bearer t2"]);

    const refusing = replay([{ method: "POST", prefix: "www.reddit.com/api/v1/access_token", reply: () => new Response('{"message": "Unauthorized", "error": 401}', { status: 401 }) }]);
    const signed = withPlatformAuth(refusing.fetch, new FakeClock(), registry, TOKEN_EXCHANGES);
    const res = await signed(reddit.buildRequest(query(), REDDIT));
    const outcome = reddit.parseResponse({ status: res.status, headers: res.headers, body: await res.text() }, query());
    expect(outcome.ok === false && outcome.error).toMatchObject({ class: "blocked", message: expect.stringMatching(/^Reddit sign-in failed: token endpoint answered HTTP 401/) });
    expect(refusing.log).toHaveLength(1); // the search itself was never sent
  });
});

describe("createSocialBackends", () => {
  it("enables the keyless platforms and disables the others with the variable to set", () => {
    const { registry } = createSocialBackends({}, { fetch: async () => new Response(), clock: new FakeClock() });
    expect(registry.ids("social")).toEqual(["hackernews", "stackexchange", "github", "lemmy", "reddit", "bluesky", "mastodon"]);
    for (const id of ["hackernews", "stackexchange", "github", "lemmy"]) expect(registry.get(id)?.enabled, id).toBe(true);
    expect(registry.get("lemmy")).toMatchObject({ config: { baseUrl: "https://lemmy.world" } });
    expect(registry.get("reddit")).toMatchObject({ enabled: false, reason: expect.stringContaining("QUARRY_REDDIT_TOKEN") });
    expect(registry.get("bluesky")).toMatchObject({ enabled: false, reason: expect.stringContaining("QUARRY_BLUESKY_KEY") });
    expect(registry.get("mastodon")).toMatchObject({ enabled: false, reason: expect.stringContaining("QUARRY_MASTODON_URL") });
    const half = createSocialBackends({ mastodon: { url: "https://mastodon.social" }, bluesky: { key: "me.bsky.social" } }, { fetch: async () => new Response(), clock: new FakeClock() });
    expect(half.registry.get("mastodon")).toMatchObject({ enabled: false, reason: expect.stringContaining("QUARRY_MASTODON_TOKEN") });
    expect(half.registry.get("bluesky")).toMatchObject({ enabled: false, reason: expect.stringContaining("QUARRY_BLUESKY_TOKEN") });
  });
});
