/**
 * The one item model every social backend yields (api.md §6, `sources[]` before scoring).
 * Parsers fill what the platform gives and leave the rest null or absent; they never guess.
 */
import type { Backend } from "../types.ts";

export const SOCIAL_PLATFORMS = ["hackernews", "stackexchange", "github", "lemmy", "reddit", "bluesky", "mastodon"] as const;
export type SocialPlatform = (typeof SOCIAL_PLATFORMS)[number];

export type SocialKind = "story" | "comment" | "question" | "answer" | "issue" | "discussion" | "post";

/** Counts as the platform reports them; a platform without a metric leaves it out. */
export interface Engagement {
  score?: number;
  comments?: number;
  answers?: number;
  reactions?: number;
  reposts?: number;
  likes?: number;
  views?: number;
}

export interface SocialItem {
  /** Platform-prefixed and stable: `hn:123`, `se:456`, `gh:owner/repo#12`, `reddit:t3_abc`, `bsky:at://…`. */
  id: string;
  platform: SocialPlatform;
  kind: SocialKind;
  title: string;
  /** One line, at most ~280 characters, plain text. */
  snippet: string;
  /** The whole plain text the platform returned (may be ""); the operation budgets it per tier. */
  text: string;
  /** Where the discussion itself lives. */
  url: string;
  /** The outside link being discussed, or null (self posts, questions, issues). */
  linked_url: string | null;
  author: string | null;
  /** Subreddit, tag, repository, community or instance. */
  community: string | null;
  /** ISO 8601 UTC (`…Z`, no milliseconds), or null. */
  published_at: string | null;
  engagement: Engagement;
}

/** A reply worth showing under a source: a top comment or answer. */
export interface SocialReply {
  id: string;
  author: string | null;
  text: string;
  score: number | null;
  url: string;
}

export type SocialBackend = Backend<SocialItem>;
