/**
 * Hacker News through Algolia's public search API. https://hn.algolia.com/api
 * Two answer shapes are live in recordings: the 2014 one (`created_at` with milliseconds,
 * explicit nulls) and the 2024+ one (keys sorted, `children[]`, `story_id` on stories,
 * `created_at` without milliseconds, extra `exhaustive*` / timing keys in the wrapper).
 * Freshness: the request stays pure (no clock), so a freshness window switches to the
 * newest-first endpoint `search_by_date` and the operation filters by date exactly.
 */
import * as v from "valibot";
import type { BackendConfig, ParseOutcome, UpstreamResponse } from "../types.ts";
import { httpFailure, parseFailure, parseJson, toIsoUtc, upstreamUrl } from "../upstream.ts";
import { compact, count, htmlToText, isoFromEpochSeconds, snippetOf, webUrlOrNull } from "./text.ts";
import type { SocialBackend, SocialItem, SocialKind, SocialReply } from "./types.ts";

const nullableString = v.nullish(v.string());
const nullableNumber = v.nullish(v.number());

const Hit = v.object({
  objectID: v.string(),
  created_at: v.optional(v.string()),
  created_at_i: nullableNumber,
  title: nullableString,
  url: nullableString,
  author: nullableString,
  points: nullableNumber,
  story_text: nullableString,
  comment_text: nullableString,
  num_comments: nullableNumber,
  story_title: nullableString,
  _tags: v.optional(v.array(v.string()), []),
});

const Answer = v.object({ hits: v.array(v.unknown()) });

const ITEM_URL = "https://news.ycombinator.com/item?id=";

function kindOf(tags: readonly string[]): SocialKind | null {
  if (tags.includes("comment")) return "comment";
  if (tags.includes("story") || tags.includes("poll") || tags.includes("job")) return "story";
  return null; // pollopt and anything new: not a discussion
}

function communityOf(tags: readonly string[]): string | null {
  if (tags.includes("ask_hn")) return "Ask HN";
  if (tags.includes("show_hn")) return "Show HN";
  return null;
}

function toItem(hit: v.InferOutput<typeof Hit>): SocialItem | null {
  const kind = kindOf(hit._tags);
  if (!kind) return null;
  const text = htmlToText((kind === "comment" ? hit.comment_text : hit.story_text) ?? "");
  const title = kind === "comment" ? `Comment on: ${hit.story_title ?? "a story"}` : htmlToText(hit.title ?? "");
  return {
    id: `hn:${hit.objectID}`,
    platform: "hackernews",
    kind,
    title,
    snippet: snippetOf(text || title),
    text,
    url: ITEM_URL + hit.objectID,
    // A comment's story_url is what the thread discusses, not what the comment is about.
    linked_url: kind === "story" ? webUrlOrNull(hit.url) : null,
    author: hit.author ?? null,
    community: communityOf(hit._tags),
    published_at: isoFromEpochSeconds(hit.created_at_i) ?? toIsoUtc(hit.created_at),
    engagement: compact({ score: count(hit.points), comments: count(hit.num_comments) }),
  };
}

export const hackernews: SocialBackend = {
  about: {
    id: "hackernews",
    kind: "social",
    defaultBaseUrl: "https://hn.algolia.com",
    docs: "https://hn.algolia.com/api",
  },

  buildRequest(query, cfg) {
    const path = query.freshness ? "/api/v1/search_by_date" : "/api/v1/search";
    const url = upstreamUrl(cfg.baseUrl, path, {
      query: query.query,
      tags: "story",
      hitsPerPage: Math.min(Math.max(query.maxResults, 1), 100),
      page: query.page && query.page > 1 ? query.page - 1 : undefined, // Algolia pages are 0-based
    });
    return new Request(url, { headers: { accept: "application/json" } });
  },

  parseResponse(res, query): ParseOutcome<SocialItem> {
    if (res.status < 200 || res.status > 299) return { ok: false, error: httpFailure(res, "HN Algolia") };
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("HN Algolia", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    if (!answer.success) return { ok: false, error: parseFailure("HN Algolia", "no hits array") };
    const results: SocialItem[] = [];
    for (const raw of answer.output.hits) {
      if (results.length >= query.maxResults) break;
      const hit = v.safeParse(Hit, raw);
      const item = hit.success ? toItem(hit.output) : null;
      if (item) results.push(item);
    }
    return { ok: true, results };
  },
};

/* ---- top comments: the items endpoint returns a story with its whole comment tree ---- */

interface ItemNode {
  id: number;
  author?: string | null;
  text?: string | null;
  points?: number | null;
  type?: string;
  children?: ItemNode[];
}

const ItemSchema: v.GenericSchema<ItemNode> = v.object({
  id: v.number(),
  author: nullableString,
  text: nullableString,
  points: nullableNumber,
  type: v.optional(v.string()),
  children: v.optional(v.array(v.lazy(() => ItemSchema))),
});

/** `GET /api/v1/items/:id`: the story and its comment tree, in one call. */
export function buildItemRequest(storyId: string, cfg: BackendConfig): Request {
  return new Request(upstreamUrl(cfg.baseUrl, `/api/v1/items/${encodeURIComponent(storyId)}`, {}), {
    headers: { accept: "application/json" },
  });
}

/**
 * Direct replies of the story, in the order Algolia lists them (HN's own rank is not in the
 * API); deleted comments (no text) are skipped. The caller picks the best few.
 */
export function parseItemReplies(res: UpstreamResponse): SocialReply[] | null {
  if (res.status !== 200) return null;
  const json = parseJson(res.body);
  const item = json.ok ? v.safeParse(ItemSchema, json.value) : null;
  if (!item?.success) return null;
  return (item.output.children ?? []).flatMap((child) => {
    const text = htmlToText(child.text ?? "");
    if (!text || (child.type && child.type !== "comment")) return [];
    return [{ id: `hn:${child.id}`, author: child.author ?? null, text, score: child.points ?? null, url: ITEM_URL + child.id }];
  });
}
