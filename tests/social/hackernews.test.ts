import { describe, expect, it } from "vitest";
import { buildItemRequest, hackernews, parseItemReplies } from "../../core/backends/social/hackernews.ts";
import { answer, fixture, query } from "../backends/helpers.ts";

const cfg = { baseUrl: "https://hn.algolia.com" };
const parse = (path: string, q = query()) => hackernews.parseResponse(answer(fixture(`hackernews/${path}`)), q);

describe("hackernews.parseResponse", () => {
  it("parses the 2024+ shape (children[], story_id, created_at without ms, sorted keys)", () => {
    const out = parse("algolia_search_new_format_theoretical_biologist.json");
    expect(out.ok && out.results).toHaveLength(1);
    const item = out.ok ? out.results[0]! : null;
    expect(item).toMatchObject({
      id: "hn:13133437",
      platform: "hackernews",
      kind: "story",
      title: "Ask HN: How would I visualize URL propagation in the blogosphere?",
      url: "https://news.ycombinator.com/item?id=13133437",
      linked_url: null,
      author: "anigbrowl",
      community: "Ask HN",
      published_at: "2016-12-08T19:39:07Z",
      engagement: { score: 1, comments: 0 },
    });
    // Entities decoded, <p> kept as paragraph breaks.
    expect(item!.text).toContain("I don't know how to harvest the data");
    expect(item!.text).toContain("HN discussion and/or the original article");
    expect(item!.text.split("\n")).toHaveLength(5);
    expect(item!.snippet.length).toBeLessThanOrEqual(280);
  });

  it("parses the 2014 shape: story with link, milliseconds in created_at, explicit nulls", () => {
    const out = parse("algolia_search__tags-story.json");
    expect(out).toEqual({
      ok: true,
      results: [
        {
          id: "hn:3078128",
          platform: "hackernews",
          kind: "story",
          title: "Steve Jobs has passed away.",
          snippet: "Steve Jobs has passed away.",
          text: "",
          url: "https://news.ycombinator.com/item?id=3078128",
          linked_url: "http://www.apple.com/stevejobs/",
          author: "patricktomas",
          community: null,
          published_at: "2011-10-05T23:42:23Z",
          engagement: { score: 4271, comments: 376 },
        },
      ],
    });
    expect(parse("algolia_search_by_date__tags-story.json")).toMatchObject({ ok: true, results: [{ id: "hn:7919424", published_at: "2014-06-20T03:35:46Z" }] });
  });

  it("types comments, polls and Ask HN; an empty url is no link", () => {
    const comment = parse("algolia_search__tags-comment__q-apple.json");
    expect(comment.ok && comment.results[0]).toMatchObject({
      id: "hn:6651926",
      kind: "comment",
      title: "Comment on: Patent war goes nuclear: Microsoft, Apple-owned Rockstar sues Google",
      linked_url: null, // the story's link is not what the comment is about
      engagement: { score: 293 },
    });
    const poll = parse("algolia_search__tags-poll.json");
    expect(poll.ok && poll.results[0]).toMatchObject({ id: "hn:3746692", kind: "story", linked_url: null });
    const ask = parse("algolia_search__tags-ask_hn__q-apple__page-2.json");
    expect(ask.ok && ask.results[0]).toMatchObject({ kind: "story", linked_url: null, community: "Ask HN", engagement: { score: 57, comments: 84 } });
    expect(parse("algolia_search__tags-story+author_pg.json").ok).toBe(true);
  });

  it("never returns more than maxResults", () => {
    expect(parse("algolia_search__tags-story.json", query({ maxResults: 0 }))).toEqual({ ok: true, results: [] });
  });

  it("classifies failures", () => {
    const limited = hackernews.parseResponse(answer('{"message":"Too many requests","status":429}', 429, { "retry-after": "30" }), query());
    expect(limited.ok === false && limited.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 30 });
    const down = hackernews.parseResponse(answer("<html>bad gateway</html>", 502), query());
    expect(down.ok === false && down.error.class).toBe("http");
    for (const body of ["", "not json", "{}", '{"hits":"no"}']) {
      const out = hackernews.parseResponse(answer(body), query());
      expect(out.ok === false && out.error.class, body).toBe("parse");
    }
  });
});

describe("hackernews.buildRequest", () => {
  it("asks the search endpoint for stories", () => {
    const url = new URL(hackernews.buildRequest(query({ query: "rust async", maxResults: 20 }), cfg).url);
    expect(url.origin + url.pathname).toBe("https://hn.algolia.com/api/v1/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ query: "rust async", tags: "story", hitsPerPage: "20" });
  });

  it("goes newest-first with a freshness window, 0-based pages, under a rebased base URL", () => {
    const req = hackernews.buildRequest(query({ query: "x", freshness: "week", page: 3 }), { baseUrl: "http://127.0.0.1:9000/hn" });
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe("http://127.0.0.1:9000/hn/api/v1/search_by_date");
    expect(url.searchParams.get("page")).toBe("2");
  });
});

describe("hackernews items (top comments)", () => {
  it("builds the items request under the base URL and parses direct replies", () => {
    expect(buildItemRequest("17", { baseUrl: "http://replay.local/prefix" }).url).toBe("http://replay.local/prefix/api/v1/items/17");
    expect(parseItemReplies(answer(fixture("hackernews/algolia_items_17.json")))).toEqual([
      { id: "hn:1079", author: "dmon", text: "sure", score: 4, url: "https://news.ycombinator.com/item?id=1079" },
      { id: "hn:454426", author: "Arrington", text: "This is why we can't have nice things.", score: 1, url: "https://news.ycombinator.com/item?id=454426" },
    ]);
    expect(parseItemReplies(answer("{}", 404))).toBeNull();
    expect(parseItemReplies(answer("nope"))).toBeNull();
  });
});
