/**
 * The route of POST /v1/social/research (api.md §2, §6): scope `research`, usage group
 * `social`. It lives beside its operation until the lead moves it to core/routes/.
 */
import { ApiError } from "../../errors.ts";
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../routes/route.ts";
import { createSocialBackends, type SocialBackends } from "../../backends/social/registry.ts";
import { socialResearch } from "./research.ts";
import { SocialResearchBody, SocialResearchResponse } from "./schema.ts";

export interface SocialRouteOptions {
  /** Prebuilt registry and runner (e.g. shared with /health); built from config otherwise. */
  backends?: SocialBackends;
  deadlineMs?: number;
}

export function socialRoutes({ ports, config }: AppDeps, options: SocialRouteOptions = {}): RouteDef[] {
  const { registry, runner } = options.backends ?? createSocialBackends(config.backends, { fetch: ports.fetch, clock: ports.clock });
  return [
    {
      method: "POST",
      path: "/v1/social/research",
      summary: "Research what people say about a topic across Hacker News, Stack Exchange, GitHub, Lemmy, Reddit, Bluesky and Mastodon",
      auth: true,
      scope: "research",
      group: "social",
      body: SocialResearchBody,
      status: 200,
      response: SocialResearchResponse,
      errors: ["upstream_error", "timeout"],
      handler: async (c) => {
        const outcome = await socialResearch(
          { registry, runner, fetch: ports.fetch, clock: ports.clock, ...(options.deadlineMs ? { deadlineMs: options.deadlineMs } : {}) },
          c.get("body"),
        );
        if (!outcome.ok) {
          const { code, message, details } = outcome.error;
          throw new ApiError(code, message, details ? { details } : {});
        }
        return c.json(outcome.value);
      },
    },
  ];
}
