/**
 * The ranking hot path of social research: filter by freshness, score every item, merge
 * items about the same thing into one source, order and cap. Pure and deterministic: ties
 * fall to the platform's rank, then the id. bench/social/run.ts times it.
 */
import { lexicalScores } from "../../ranking/lexical.ts";
import { FRESHNESS_MS } from "../../ranking/merge.ts";
import type { Freshness } from "../../backends/types.ts";
import type { SocialItem, SocialPlatform } from "../../backends/social/types.ts";
import { duplicateGroups, type DedupOptions } from "./dedup.ts";
import {
  blendEngagement, blendRelevance, engagementValue, finalScore, percentiles, recencyScore, round4, type ScoreParts,
} from "./score.ts";

export interface RankOptions {
  query: string;
  /** Current time (Clock port), ms. */
  now: number;
  freshness: Freshness | null;
  /** Sources kept across platforms. */
  maxSources: number;
  dedup?: DedupOptions;
}

export interface Scores extends ScoreParts {
  final: number;
}

export interface RankedSource {
  item: SocialItem;
  scores: Scores;
  /** The other items merged into this source, best first. */
  also: SocialItem[];
}

export interface RankOutcome {
  sources: RankedSource[];
  /** Items per platform that passed the freshness filter. */
  considered: Partial<Record<SocialPlatform, number>>;
}

interface Candidate {
  item: SocialItem;
  /** 1-based position in its platform's answer. */
  rank: number;
  parts: ScoreParts;
  final: number;
}

/** Only this much of a long text takes part in lexical scoring: titles and openings carry the topic. */
const LEXICAL_TEXT_CHARS = 1_200;

function byBest(a: Candidate, b: Candidate): number {
  return b.final - a.final || a.rank - b.rank || (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : 0);
}

export function rankSocial(perPlatform: Readonly<Partial<Record<SocialPlatform, readonly SocialItem[]>>>, opts: RankOptions): RankOutcome {
  const oldest = opts.freshness ? opts.now - FRESHNESS_MS[opts.freshness] : null;
  const considered: Partial<Record<SocialPlatform, number>> = {};
  const candidates: { item: SocialItem; rank: number }[] = [];
  for (const platform of Object.keys(perPlatform).sort() as SocialPlatform[]) {
    const items = perPlatform[platform] ?? [];
    let kept = 0;
    items.forEach((item, i) => {
      if (oldest !== null && item.published_at !== null && Date.parse(item.published_at) < oldest) return;
      candidates.push({ item, rank: i + 1 });
      kept++;
    });
    considered[platform] = kept;
  }

  const lexical = lexicalScores(
    opts.query,
    candidates.map(({ item }) => ({ title: item.title, content: item.text ? item.text.slice(0, LEXICAL_TEXT_CHARS) : item.snippet })),
  );

  // Engagement: absolute per platform, blended with the percentile inside the platform's batch.
  const absolute = candidates.map(({ item }) => engagementValue(item.platform, item.engagement));
  const engagement = new Array<number>(candidates.length).fill(0);
  const byPlatform = new Map<SocialPlatform, number[]>();
  candidates.forEach(({ item }, i) => {
    const list = byPlatform.get(item.platform);
    if (list) list.push(i);
    else byPlatform.set(item.platform, [i]);
  });
  for (const indices of byPlatform.values()) {
    const pct = percentiles(indices.map((i) => absolute[i]!));
    indices.forEach((i, k) => (engagement[i] = blendEngagement(absolute[i]!, pct[k]!)));
  }

  const scored: Candidate[] = candidates.map(({ item, rank }, i) => {
    const parts = {
      relevance: blendRelevance(lexical[i]!, rank),
      engagement: engagement[i]!,
      recency: recencyScore(item.published_at, opts.now, opts.freshness),
    };
    return { item, rank, parts, final: finalScore(parts, opts.freshness) };
  });

  const groups = duplicateGroups(scored.map((c) => c.item), opts.dedup);
  const sources = groups.map((group) => {
    const members = group.map((i) => scored[i]!).sort(byBest);
    const best = members[0]!;
    const also = members.slice(1).map((m) => m.item);
    return {
      best,
      source: {
        item: best.item,
        scores: {
          relevance: round4(best.parts.relevance),
          engagement: round4(best.parts.engagement),
          recency: round4(best.parts.recency),
          final: round4(finalScore(best.parts, opts.freshness, also.length)),
        },
        also,
      } satisfies RankedSource,
    };
  });

  sources.sort((a, b) => b.source.scores.final - a.source.scores.final || byBest(a.best, b.best));
  return { sources: sources.slice(0, Math.max(0, opts.maxSources)).map((s) => s.source), considered };
}
