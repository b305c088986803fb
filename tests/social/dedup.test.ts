import { describe, expect, it } from "vitest";
import { bluesky } from "../../core/backends/social/bluesky.ts";
import { hackernews } from "../../core/backends/social/hackernews.ts";
import { reddit } from "../../core/backends/social/reddit.ts";
import { duplicateGroups, linkKey, nearDuplicatePairs, shingles } from "../../core/operations/social/dedup.ts";
import { rankSocial } from "../../core/operations/social/rank.ts";
import { item, parsed } from "./items.ts";

const NOW = Date.UTC(2026, 10, 22, 12);

describe("merging across platforms", () => {
  it("the same link on HN and Reddit becomes one source with also_discussed_on", () => {
    const hn = parsed(hackernews, "hackernews/algolia_search__tags-story.json"); // links http://www.apple.com/stevejobs/
    const redditPosts = parsed(reddit, "reddit/oauth_r_all_search_praw_oauth_search.json");
    // The same page as a Reddit link post would carry it: https, no www, tracking parameters.
    const sameLink = { ...redditPosts[1]!, linked_url: "https://apple.com/stevejobs?utm_source=reddit&utm_medium=social" };
    const out = rankSocial({ hackernews: hn, reddit: [redditPosts[0]!, sameLink] }, { query: "steve jobs", now: NOW, freshness: null, maxSources: 20 });
    expect(out.sources).toHaveLength(2);
    const merged = out.sources.find((s) => s.also.length)!;
    const members = [merged.item, ...merged.also].map((i) => i.id).sort();
    expect(members).toEqual(["hn:3078128", "reddit:t3_3x4kt2"]);
    expect(merged.item.id).toBe("hn:3078128"); // the better-scored item represents the source
    expect(merged.also.map((a) => ({ platform: a.platform, id: a.id, url: a.url }))).toEqual([
      { platform: "reddit", id: "reddit:t3_3x4kt2", url: "https://www.reddit.com/r/redditdev/comments/3x4kt2/praw_is_there_an_easy_way_of_getting_a_list_of/" },
    ]);
  });

  it("a post sharing an HN thread joins that thread; bare homepages do not merge anything", () => {
    const story = item({ id: "hn:42", url: "https://news.ycombinator.com/item?id=42", linked_url: "https://example.com/" });
    const share = item({ id: "bsky:at://x/app.bsky.feed.post/1", platform: "bluesky", kind: "post", linked_url: "https://news.ycombinator.com/item?id=42" });
    const other = item({ id: "reddit:t3_z", platform: "reddit", kind: "post", linked_url: "https://www.example.com" });
    expect(duplicateGroups([story, share, other])).toEqual([[0, 1], [2]]);
    expect(linkKey("https://example.com/")).toBeNull();
    expect(linkKey("https://www.youtube.com/watch?v=abc&utm_source=x")).toBe("youtube.com/watch?v=abc");
    expect(linkKey(null)).toBeNull();
    expect(linkKey("not a url")).toBeNull();
  });

  it("near-duplicate texts merge (a bot cross-posting), different ones do not", () => {
    const text = "Ends Versus Means: Public Opinion on Congressional Redistricting. State-level redistricting processes shape congressional elections and representation, and recent reform efforts have propelled congressional redistricting procedures into mainstream political discussion";
    const a = item({ id: "bsky:1", platform: "bluesky", title: "", text });
    const b = item({ id: "mastodon:2", platform: "mastodon", title: "", text: `${text} #sociology #politics` });
    const c = item({ id: "bsky:3", platform: "bluesky", title: "", text: "Redistricting in Texas: the commissioners court votes next week on a new map for county precincts and the public hearing is Tuesday" });
    const short1 = item({ id: "x:1", title: "", text: "sure" });
    const short2 = item({ id: "x:2", title: "", text: "sure" });
    expect(duplicateGroups([a, b, c, short1, short2])).toEqual([[0, 1], [2], [3], [4]]);
  });

  it("finds exactly the pairs an all-pairs comparison finds (prefix filter is lossless)", () => {
    const posts = parsed(bluesky, "bluesky/app.bsky.feed.searchPosts_redistricting.json");
    let s = 3;
    const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    // Variants of real posts: some words dropped or appended, so similarities spread around 0.8.
    const items = posts.flatMap((p, i) => {
      const words = p.text.split(/\s+/);
      return [0, 1, 2].map((k) => {
        const kept = words.filter(() => rand() > 0.04 * k);
        return item({ id: `v${i}-${k}`, title: "", text: [...kept, ...(k === 2 ? ["extra", "words"] : [])].join(" ") });
      });
    });
    for (const threshold of [0.5, 0.8, 0.9]) {
      const fast = nearDuplicatePairs(items, { threshold }).map(([x, y]) => `${x}-${y}`).sort();
      const sets = items.map((it) => shingles(it.title, it.text));
      const slow: string[] = [];
      for (let x = 0; x < items.length; x++) {
        for (let y = x + 1; y < items.length; y++) {
          if (sets[x]!.size < 5 || sets[y]!.size < 5) continue;
          let shared = 0;
          for (const sh of sets[x]!) if (sets[y]!.has(sh)) shared++;
          if (shared / (sets[x]!.size + sets[y]!.size - shared) >= threshold) slow.push(`${x}-${y}`);
        }
      }
      expect(fast, `threshold ${threshold}`).toEqual(slow.sort());
      if (threshold === 0.8) expect(fast.length).toBeGreaterThan(10);
    }
  });

  it("counts a source discussed elsewhere a little higher than it would score alone", () => {
    const a = item({ id: "hn:1", title: "Rust async", linked_url: "https://blog.example/post" });
    const b = item({ id: "lemmy:x/post/1", platform: "lemmy", kind: "post", title: "Something else entirely", linked_url: "https://blog.example/post/" });
    const alone = rankSocial({ hackernews: [a] }, { query: "rust async", now: NOW, freshness: null, maxSources: 5 }).sources[0]!;
    const together = rankSocial({ hackernews: [a], lemmy: [b] }, { query: "rust async", now: NOW, freshness: null, maxSources: 5 });
    expect(together.sources).toHaveLength(1);
    expect(together.sources[0]!.scores.final).toBeGreaterThan(alone.scores.final);
  });
});
