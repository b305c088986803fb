/**
 * POST /v1/research (api.md §2, §6): scope `research`, usage group `research` (one unit
 * however many searches and reads it makes). With `stream: true` the answer is
 * `text/event-stream`: `progress` events, then one `result` (the same body as the JSON
 * answer) or one `error` carrying the error object.
 */
import { streamSSE } from "hono/streaming";
import { errorBody, toApiError } from "../../errors.ts";
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import { research, type ResearchDeps } from "./research.ts";
import { checkCollections } from "./collections.ts";
import { ResearchBody, ResearchResponseSchema, type ResearchRequest } from "./schema.ts";

export function researchRoutes({ ports, config, services }: AppDeps): RouteDef[] {
  const deps: ResearchDeps = {
    ports,
    runner: services.runner,
    fetch: services.fetch,
    llm: services.llm,
    embeddings: config.embeddings,
    ...(services.llmTimeoutMs ? { llmTimeoutMs: services.llmTimeoutMs } : {}),
    ...(services.deadlines.research ? { deadlineMs: services.deadlines.research } : {}),
  };
  return [
    {
      method: "POST",
      path: "/v1/research",
      operationId: "research",
      summary: "Research a question: search several queries, read the best pages and write a report whose every sentence cites its sources",
      description:
        "Plans sub-queries, searches them at once, reads the best pages and writes a summary and findings in which every sentence cites source ids (S1, S2, …) from `sources`. Extractive and deterministic unless the operator configured an LLM. With `stream: true` the answer is `text/event-stream`: `progress` events, then one `result`. Use it for a question that needs several sources; one unit of the `research` group however many searches and reads it makes. `collections` adds the account's collections as sources (their matching passages, read from the index, cited by their URLs, or `quarry://collections/{name}/documents/{id}` for a document without one); with `web: false` no engine is asked and no page fetched, so the report cites only the collections' pages. A name the account has no collection of is a 404.",
      example: { query: "Why do LSM trees need compaction?", tier: "summary", max_sources: 6 },
      auth: true,
      scope: "research",
      group: "research",
      body: ResearchBody,
      status: 200,
      response: ResearchResponseSchema,
      alsoProduces: ["text/event-stream"],
      errors: ["upstream_error", "timeout", "not_found", "service_unavailable"],
      handler: async (c) => {
        const req = c.get("body") as ResearchRequest;
        const account = c.get("auth")?.account.name ?? "";
        // An unknown collection is a 404 before a stream would answer 200.
        if (req.collections?.length) await checkCollections(ports.collections, account, req.collections);
        if (!req.stream) return c.json(await research(deps, req, undefined, account));
        const requestId = c.get("requestId") ?? "req_unknown";
        return streamSSE(c, async (stream) => {
          let chain: Promise<void> = Promise.resolve();
          const send = (event: string, data: unknown) => (chain = chain.then(() => stream.writeSSE({ event, data: JSON.stringify(data) })));
          try {
            const body = await research(deps, req, (p) => send("progress", p), account);
            await send("result", body);
          } catch (err) {
            const apiErr = toApiError(err);
            if (apiErr.status >= 500 && apiErr.code === "internal_error") {
              ports.logger.error({ req_id: requestId, err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, apiErr.code);
            }
            // The stream already answered 200: a server-side failure gives the unit back here.
            if (apiErr.status >= 500) await c.get("refund")?.();
            await send("error", errorBody(apiErr, requestId));
          }
        });
      },
    },
  ];
}
