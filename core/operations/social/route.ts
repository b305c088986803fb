/** POST /v1/social/research (api.md §2, §6): scope `research`, usage group `social`. */
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import { SocialResearchBody, SocialResearchResponse, type SocialResearchInput } from "./schema.ts";
import { socialResearch, type SocialResearchDeps } from "./social.ts";

export function socialRoutes({ ports, services }: AppDeps): RouteDef[] {
  const { deadlines } = services;
  const deps: SocialResearchDeps = { ...services.social, fetch: services.fetch, clock: ports.clock, ...(deadlines.social ? { deadlineMs: deadlines.social } : {}) };
  return [
    {
      method: "POST",
      path: "/v1/social/research",
      operationId: "socialResearch",
      summary: "Research what people say about a topic across Hacker News, Stack Exchange, GitHub, Lemmy, Reddit, Bluesky and Mastodon",
      description:
        "Asks the community platforms at once, ranks the discussions by relevance, engagement and recency, merges the same discussion seen on several platforms, adds the best replies, and writes a short report whose themes cite source ids. `meta.platforms` says how each platform did; one without credentials is reported `disabled`. Use it for opinions, experience reports and known problems. One unit of the `social` group.",
      example: { query: "sqlite in production", platforms: ["hackernews", "stackexchange"], max_sources: 10 },
      auth: true,
      scope: "research",
      group: "social",
      body: SocialResearchBody,
      status: 200,
      response: SocialResearchResponse,
      errors: ["upstream_error", "timeout"],
      handler: async (c) => c.json(await socialResearch(deps, c.get("body") as SocialResearchInput)),
    },
  ];
}
