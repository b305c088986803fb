/** Building SocialItems for ranking tests, from recordings or from scratch. */
import type { SocialItem } from "../../core/backends/social/types.ts";
import type { SocialBackend } from "../../core/backends/social/types.ts";
import { answer, fixture, query } from "../backends/helpers.ts";

export function item(overrides: Partial<SocialItem> & Pick<SocialItem, "id">): SocialItem {
  return {
    platform: "hackernews",
    kind: "story",
    title: "A title",
    snippet: "",
    text: "",
    url: `https://example.org/discussion/${encodeURIComponent(overrides.id)}`,
    linked_url: null,
    author: null,
    community: null,
    published_at: "2026-11-01T00:00:00Z",
    engagement: {},
    ...overrides,
  };
}

export function parsed(backend: SocialBackend, path: string): SocialItem[] {
  const out = backend.parseResponse(answer(fixture(path)), query({ maxResults: 100 }));
  if (!out.ok) throw new Error(`${path}: ${out.error.message}`);
  return out.results;
}
