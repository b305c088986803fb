/**
 * The backend catalogue: every backend Quarry knows, listed once, in the order health and
 * `meta.backends` report them. Config ids (`QUARRY_<ID>_URL`), the request enums (`backends`,
 * `platforms`), the services' registries and runners, and /health all derive from it, so
 * adding an engine is its module, one line here, and a fixture test.
 */
import { brave } from "./brave.ts";
import { duckduckgo } from "./duckduckgo.ts";
import { searxng } from "./searxng.ts";
import { wikipedia } from "./wikipedia.ts";
import { invidious } from "./youtube/invidious.ts";
import { youtube } from "./youtube/search.ts";
import type { TokenExchange } from "./social/auth.ts";
import { bluesky, blueskyAuth } from "./social/bluesky.ts";
import { github } from "./social/github.ts";
import { hackernews } from "./social/hackernews.ts";
import { lemmy } from "./social/lemmy.ts";
import { mastodon } from "./social/mastodon.ts";
import { reddit, redditAuth } from "./social/reddit.ts";
import { stackexchange } from "./social/stackexchange.ts";
import type { Backend, BackendKind, RawResult } from "./types.ts";

export interface CatalogueEntry {
  backend: Backend<unknown>;
  /** How the platform signs in before its requests (app-only OAuth, sessions). */
  signIn?: TokenExchange;
}

export const CATALOGUE: readonly CatalogueEntry[] = [
  { backend: searxng },
  { backend: duckduckgo },
  { backend: wikipedia },
  { backend: brave },
  { backend: youtube },
  { backend: invidious },
  { backend: hackernews },
  { backend: stackexchange },
  { backend: github },
  { backend: lemmy },
  { backend: reddit, signIn: redditAuth },
  { backend: bluesky, signIn: blueskyAuth },
  { backend: mastodon },
];

export function backendsOf(kind: BackendKind): Backend<unknown>[] {
  return CATALOGUE.filter((e) => e.backend.about.kind === kind).map((e) => e.backend);
}

const idsOf = (backends: readonly Backend<unknown>[]) => backends.map((b) => b.about.id);

export const WEB_BACKENDS = backendsOf("web") as Backend<RawResult>[];
export const VIDEO_BACKENDS = backendsOf("video");
export const SOCIAL_BACKENDS = backendsOf("social");
export const TOKEN_EXCHANGES: readonly TokenExchange[] = CATALOGUE.flatMap((e) => (e.signIn ? [e.signIn] : []));

/** Every backend id: `QUARRY_<ID>_URL`, `_KEY` and `_TOKEN` are read for each. */
export const BACKEND_IDS: readonly string[] = idsOf(CATALOGUE.map((e) => e.backend));
export const WEB_BACKEND_IDS: readonly string[] = idsOf(WEB_BACKENDS);
export const SOCIAL_PLATFORM_IDS: readonly string[] = idsOf(SOCIAL_BACKENDS);
