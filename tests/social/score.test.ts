import { describe, expect, it } from "vitest";
import { SOCIAL_PLATFORMS, type Engagement } from "../../core/backends/social/types.ts";
import {
  blendEngagement, blendRelevance, engagementValue, ENGAGEMENT_CAPS, finalScore, percentiles, recencyScore,
} from "../../core/operations/social/score.ts";
import { rankSocial } from "../../core/operations/social/rank.ts";
import { item } from "./items.ts";

const NOW = Date.UTC(2026, 10, 22, 12);
const DAY = 86_400_000;

/** A small deterministic generator, so property tests replay exactly. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe("score parts", () => {
  it("stay in [0, 1] for any counts, including negative and huge ones", () => {
    const r = rng(7);
    for (let n = 0; n < 500; n++) {
      const platform = SOCIAL_PLATFORMS[n % SOCIAL_PLATFORMS.length]!;
      const e: Engagement = { score: Math.round((r() - 0.2) * 10 ** (r() * 7)), comments: Math.round(r() * 10 ** (r() * 6)), likes: Math.round(r() * 1e9), reposts: Math.round(r() * 50), answers: 3, views: 1e12, reactions: 0 };
      const v = engagementValue(platform, e);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
      const parts = { relevance: r(), engagement: blendEngagement(v, r()), recency: recencyScore(new Date(NOW - r() * 4000 * DAY).toISOString(), NOW, null) };
      for (const f of [null, "day", "week", "month", "year"] as const) {
        for (const others of [0, 1, 5]) {
          const s = finalScore(parts, f, others);
          expect(s).toBeGreaterThanOrEqual(0);
          expect(s).toBeLessThanOrEqual(1);
        }
      }
    }
    expect(engagementValue("reddit", { score: -500 })).toBe(0);
    expect(engagementValue("hackernews", { score: 10 ** 9, comments: 10 ** 9 })).toBe(1);
    for (const caps of Object.values(ENGAGEMENT_CAPS)) {
      expect(Object.values(caps).reduce((sum, [, w]) => sum + w, 0)).toBeCloseTo(1, 9);
    }
  });

  it("engagement is monotone in every metric the platform counts", () => {
    for (const platform of SOCIAL_PLATFORMS) {
      for (const metric of Object.keys(ENGAGEMENT_CAPS[platform]) as (keyof Engagement)[]) {
        let last = -1;
        for (const x of [0, 1, 2, 5, 10, 100, 1_000, 10_000, 1e6]) {
          const v = engagementValue(platform, { [metric]: x });
          expect(v, `${platform}.${metric}=${x}`).toBeGreaterThanOrEqual(last);
          last = v;
        }
        expect(last, `${platform}.${metric} saturates`).toBeGreaterThan(0);
      }
    }
  });

  it("recency is 1 now, halves per half-life, falls with age, and is 0 when unknown", () => {
    expect(recencyScore(new Date(NOW).toISOString(), NOW, null)).toBe(1);
    expect(recencyScore(new Date(NOW + DAY).toISOString(), NOW, "day")).toBe(1);
    expect(recencyScore(new Date(NOW - 3 * DAY).toISOString(), NOW, "week")).toBeCloseTo(0.5, 9);
    expect(recencyScore(null, NOW, null)).toBe(0);
    expect(recencyScore("soon", NOW, null)).toBe(0);
    let last = 2;
    for (const days of [0, 1, 7, 30, 365, 3650]) {
      const v = recencyScore(new Date(NOW - days * DAY).toISOString(), NOW, "month");
      expect(v).toBeLessThan(last);
      last = v;
    }
    // A narrower freshness window decays faster.
    const month = new Date(NOW - 20 * DAY).toISOString();
    expect(recencyScore(month, NOW, "week")).toBeLessThan(recencyScore(month, NOW, "year"));
  });

  it("final is monotone in relevance, engagement, recency and merged discussions", () => {
    const r = rng(11);
    for (let n = 0; n < 300; n++) {
      const parts = { relevance: r(), engagement: r(), recency: r() };
      const f = n % 2 ? "week" : null;
      const base = finalScore(parts, f);
      const d = r() * (1 - Math.max(parts.relevance, parts.engagement, parts.recency));
      expect(finalScore({ ...parts, relevance: parts.relevance + d }, f)).toBeGreaterThanOrEqual(base);
      expect(finalScore({ ...parts, engagement: parts.engagement + d }, f)).toBeGreaterThanOrEqual(base);
      expect(finalScore({ ...parts, recency: parts.recency + d }, f)).toBeGreaterThanOrEqual(base);
      expect(finalScore(parts, f, 2)).toBeGreaterThanOrEqual(base);
    }
    // Popularity cannot make an off-topic item beat an on-topic one.
    expect(finalScore({ relevance: 0.05, engagement: 1, recency: 1 }, null)).toBeLessThan(finalScore({ relevance: 0.4, engagement: 0, recency: 0 }, null));
  });

  it("percentiles rank within the batch, ties sharing the middle", () => {
    expect(percentiles([5])).toEqual([0.5]);
    expect(percentiles([3, 1, 2])).toEqual([1, 0, 0.5]);
    expect(percentiles([1, 1, 1])).toEqual([0.5, 0.5, 0.5]);
    expect(blendRelevance(0, 1)).toBeCloseTo(0.15, 9);
    expect(blendRelevance(1, 1)).toBeCloseTo(1, 9);
  });
});

describe("rankSocial scoring", () => {
  const opts = { query: "rust async runtime", now: NOW, freshness: null, maxSources: 50 };

  it("ranks a more engaged item higher when all else is equal (within and across batches)", () => {
    const same = { title: "Rust async runtime comparison", published_at: "2026-11-20T00:00:00Z" };
    const low = [item({ id: "hn:1", ...same, engagement: { score: 3, comments: 1 } }), item({ id: "hn:2", title: "Unrelated", engagement: { score: 3 } })];
    const high = [item({ id: "hn:1", ...same, engagement: { score: 300, comments: 100 } }), low[1]!];
    const a = rankSocial({ hackernews: low }, opts).sources.find((s) => s.item.id === "hn:1")!;
    const b = rankSocial({ hackernews: high }, opts).sources.find((s) => s.item.id === "hn:1")!;
    expect(b.scores.engagement).toBeGreaterThan(a.scores.engagement);
    expect(b.scores.final).toBeGreaterThan(a.scores.final);
  });

  it("ranks a newer item higher when all else is equal, and filters by freshness exactly", () => {
    const old = item({ id: "hn:1", title: "Rust async runtime", published_at: "2026-01-01T00:00:00Z" });
    const recent = item({ id: "hn:2", title: "Rust async runtime", published_at: "2026-11-21T00:00:00Z" });
    const undated = item({ id: "hn:3", title: "Rust async runtime", published_at: null });
    const out = rankSocial({ hackernews: [old, recent, undated] }, opts);
    const score = (id: string) => out.sources.find((s) => s.item.id === id)!.scores;
    expect(score("hn:2").recency).toBeGreaterThan(score("hn:1").recency);
    const fresh = rankSocial({ hackernews: [old, recent, undated] }, { ...opts, freshness: "month" });
    expect(fresh.sources.map((s) => s.item.id).sort()).toEqual(["hn:2", "hn:3"]); // undated items stay
    expect(fresh.considered).toEqual({ hackernews: 2 });
  });

  it("keeps every score in [0, 1] and caps the kept sources", () => {
    const many = Array.from({ length: 30 }, (_, i) => item({ id: `hn:${i}`, title: `Rust async ${i % 3 ? "runtime" : "book"} ${i}`, engagement: { score: i * 7 } }));
    const out = rankSocial({ hackernews: many }, { ...opts, maxSources: 7 });
    expect(out.sources).toHaveLength(7);
    for (const s of out.sources) for (const v of Object.values(s.scores)) expect(v >= 0 && v <= 1).toBe(true);
    const finals = out.sources.map((s) => s.scores.final);
    expect(finals).toEqual([...finals].sort((x, y) => y - x));
  });
});
