/**
 * Tavily `POST /map` → native `POST /v1/map` (one `crawl` unit) and Tavily `POST /crawl` →
 * a native crawl job, waited for (on its event stream) until shortly before Tavily's
 * `timeout`, then read whole. Tavily's crawl answers synchronously; a job still running at the timeout is cancelled
 * and what it read is returned, with `quarry.stopped_reason` saying so.
 */
import type { Context } from "hono";
import * as v from "valibot";
import { ApiError } from "../../errors.ts";
import type { AppEnv } from "../../gateway/context.ts";
import { authorizationOf, type Dispatch } from "../dispatch.ts";
import { asIgnored, beforeClientTimeout, bodyOf, ignoredOptions, readBody, refuseSchemesAsInvalid, secondsSince } from "../http.ts";
import { JOB_PATH, waitForJob, wholeJob } from "../native-jobs.ts";
import { compilePathPattern, PATTERN_RULE, type PathPattern } from "../../jobs/path-patterns.ts";

const num = (field: string) => v.optional(v.nullable(v.number(`${field} must be a number`)));
const patterns = (field: string) => v.optional(v.nullable(v.array(v.string(), `${field} must be an array of regular expressions`)));

const SiteBody = v.looseObject({
  url: v.string("url must be a string"),
  api_key: v.optional(v.nullable(v.string())),
  limit: num("limit"),
  max_depth: num("max_depth"),
  timeout: num("timeout"),
  select_paths: patterns("select_paths"),
  exclude_paths: patterns("exclude_paths"),
  allow_external: v.optional(v.nullable(v.boolean())),
  format: v.optional(v.nullable(v.picklist(["markdown", "text"], "format must be markdown or text"))),
  extract_depth: v.optional(v.nullable(v.picklist(["basic", "advanced"], "extract_depth must be basic or advanced"))),
  include_usage: v.optional(v.nullable(v.unknown())),
});
type SiteRequest = v.InferOutput<typeof SiteBody>;

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(n)));
/** Tavily's URLs may lack a scheme (`docs.tavily.com`). */
const absolute = (url: string) => (/^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `https://${url}`);

/** The path filter, or the 400 in Tavily's field names when a pattern is not one Quarry runs. */
function checkedPathFilter(body: SiteRequest): (url: string) => boolean {
  const compile = (p: string): PathPattern => {
    const re = compilePathPattern(p);
    if (!re) throw new ApiError("invalid_request", `each of select_paths and exclude_paths must be ${PATTERN_RULE}.`);
    return re;
  };
  const keep = (body.select_paths ?? []).map(compile);
  const drop = (body.exclude_paths ?? []).map(compile);
  return (url) => {
    const path = new URL(url).pathname;
    return (keep.length === 0 || keep.some((r) => r.test(path))) && !drop.some((r) => r.test(path));
  };
}

export function tavilyMap(dispatch: Dispatch, now: () => number) {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, SiteBody);
    const url = absolute(body.url);
    refuseSchemesAsInvalid([{ field: "url", url }]);
    const native: Record<string, unknown> = { url };
    if (typeof body.limit === "number") native.limit = clamp(body.limit, 1, 5000);
    // The client gives up at `timeout` itself: the map's own bound ends a margin before it.
    if (typeof body.timeout === "number") native.timeout_ms = clamp(beforeClientTimeout(body.timeout), 1000, 60_000);
    const keep = checkedPathFilter(body);
    const res = bodyOf<{ links: Array<{ url: string }>; meta: unknown }>(await dispatch(c, { method: "POST", path: "/v1/map", body: native, authorization: authorizationOf(c, body.api_key) }));
    const ignored = ignoredOptions(body as Record<string, unknown>, new Set(["url", "api_key", "limit", "timeout", "select_paths", "exclude_paths", "include_usage"]));
    return c.json({
      base_url: url,
      results: res.links.map((l) => l.url).filter(keep),
      response_time: secondsSince(c.get("startedAt") ?? now(), now()),
      request_id: c.get("requestId") ?? "",
      ...(body.include_usage ? { usage: { credits: 1 } } : {}),
      quarry: { ignored: asIgnored(ignored), meta: res.meta },
    });
  };
}

export function tavilyCrawl(dispatch: Dispatch, now: () => number) {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, SiteBody);
    checkedPathFilter(body); // the native crawl would name its own fields (include_paths) instead
    const url = absolute(body.url);
    refuseSchemesAsInvalid([{ field: "url", url }]);
    const started = c.get("startedAt") ?? now();
    const native: Record<string, unknown> = {
      url,
      limit: clamp(body.limit ?? 50, 1, 10_000),
      max_depth: clamp(body.max_depth ?? 1, 0, 10),
      formats: [body.format === "text" ? "text" : "markdown"],
      only_main_content: body.extract_depth !== "advanced",
    };
    if (body.select_paths?.length) native.include_paths = body.select_paths;
    if (body.exclude_paths?.length) native.exclude_paths = body.exclude_paths;
    if (typeof body.allow_external === "boolean") native.allow_external = body.allow_external;
    const authorization = authorizationOf(c, body.api_key);
    const job = bodyOf<{ id: string }>(await dispatch(c, { method: "POST", path: JOB_PATH.crawl, body: native, authorization }));
    // The client gives up at `timeout` itself (tavily-js and tavily-python both set it as the
    // HTTP timeout): stop waiting early enough that the answer reaches it before then.
    // A timeout under Tavily's 10 s is honoured too: the client gives up then all the same.
    const timeoutMs = Math.min(150, Math.max(1, body.timeout ?? 150)) * 1000;
    const deadline = started + Math.max(1000, timeoutMs - Math.min(5000, Math.max(2000, timeoutMs / 10)));
    const finished = await waitForJob(dispatch, c, "crawl", job.id, authorization, deadline, now);
    if (!finished) await dispatch(c, { method: "DELETE", path: `${JOB_PATH.crawl}/${job.id}`, authorization });
    const all = await wholeJob(dispatch, c, "crawl", job.id, authorization);
    const pages = all.data.filter((p) => !p.error);
    const ignored = ignoredOptions(body as Record<string, unknown>, new Set(["url", "api_key", "limit", "max_depth", "timeout", "select_paths", "exclude_paths", "allow_external", "format", "extract_depth", "include_usage"]));
    return c.json({
      base_url: url,
      results: pages.map((p) => ({ url: p.url, raw_content: (body.format === "text" ? p.text : p.markdown) ?? "", favicon: null })),
      response_time: secondsSince(started, now()),
      request_id: c.get("requestId") ?? "",
      ...(body.include_usage ? { usage: { credits: pages.length } } : {}),
      quarry: { ignored: asIgnored(ignored), job: job.id, status: all.status, stopped_reason: finished ? all.stopped_reason : "timeout", failed: all.failures },
    });
  };
}
