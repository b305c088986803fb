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
import { wholeNumber } from "../../schema/fields.ts";
import { capped, type Clamped } from "../clamped.ts";

const whole = (field: string, min: number, max?: number) => v.optional(v.nullable(wholeNumber(field, min, max)));
const patterns = (field: string) => v.optional(v.nullable(v.array(v.string(), `${field} must be an array of regular expressions`)));

/**
 * Tavily documents these ranges for map and crawl (whole numbers: `max_depth` 1–5,
 * `max_breadth` 1–500, `limit` at least 1; `timeout` at most 150 s) and answers a value outside
 * them with a 400: so does this route, naming the field, before anything is read or counted. A
 * `timeout` under Tavily's 10 s is met rather than refused (the client gives up then anyway). A
 * value Tavily takes but Quarry cannot honour (a `limit` past the native maximum) is applied
 * at Quarry's maximum and listed in `quarry.clamped`, which the clients do not read.
 */
const SiteBody = v.looseObject({
  url: v.string("url must be a string"),
  api_key: v.optional(v.nullable(v.string())),
  limit: whole("limit", 1),
  max_depth: whole("max_depth", 1, 5),
  max_breadth: whole("max_breadth", 1, 500),
  timeout: v.optional(v.nullable(v.pipe(v.number("timeout must be a number of seconds"), v.gtValue(0, "timeout must be more than 0 seconds"), v.maxValue(150, "timeout must be at most 150 seconds")))),
  select_paths: patterns("select_paths"),
  exclude_paths: patterns("exclude_paths"),
  allow_external: v.optional(v.nullable(v.boolean())),
  format: v.optional(v.nullable(v.picklist(["markdown", "text"], "format must be markdown or text"))),
  extract_depth: v.optional(v.nullable(v.picklist(["basic", "advanced"], "extract_depth must be basic or advanced"))),
  include_usage: v.optional(v.nullable(v.unknown())),
});
type SiteRequest = v.InferOutput<typeof SiteBody>;

/**
 * Tavily's documented defaults for map and crawl (the same for both): what a body that leaves a
 * value out asks for. `max_breadth` (20) is not applied either way (named as not applied when sent).
 */
const TAVILY_DEFAULT = { limit: 50, max_depth: 1, timeout: 150 } as const;

/** The map's own bound reads for at most this long (native `timeout_ms`). */
const MAP_MAX_MS = 60_000;
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
    const clamped: Clamped[] = [];
    // Tavily's defaults where the body leaves a value out (limit 50, timeout 150 s), not native's.
    const native: Record<string, unknown> = { url, limit: capped(clamped, "limit", body.limit ?? TAVILY_DEFAULT.limit, 5000, "Quarry's map lists at most 5000 URLs") };
    // The client gives up at `timeout` itself: the map's own bound ends a margin before it.
    const bound = beforeClientTimeout(body.timeout ?? TAVILY_DEFAULT.timeout);
    if (bound > MAP_MAX_MS && typeof body.timeout === "number") clamped.push({ option: "timeout", requested: body.timeout, applied: MAP_MAX_MS / 1000, reason: `Quarry's map reads for at most ${MAP_MAX_MS / 1000} s, and answers with what it found by then` });
    native.timeout_ms = Math.min(MAP_MAX_MS, Math.max(1000, bound));
    const keep = checkedPathFilter(body);
    const res = bodyOf<{ links: Array<{ url: string }>; meta: unknown }>(await dispatch(c, { method: "POST", path: "/v1/map", body: native, authorization: authorizationOf(c, body.api_key) }));
    const ignored = ignoredOptions(body as Record<string, unknown>, new Set(["url", "api_key", "limit", "timeout", "select_paths", "exclude_paths", "include_usage"]));
    return c.json({
      base_url: url,
      results: res.links.map((l) => l.url).filter(keep),
      response_time: secondsSince(c.get("startedAt") ?? now(), now()),
      request_id: c.get("requestId") ?? "",
      ...(body.include_usage ? { usage: { credits: 1 } } : {}),
      quarry: { ignored: asIgnored(ignored), clamped, meta: res.meta },
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
    const clamped: Clamped[] = [];
    const native: Record<string, unknown> = {
      url,
      limit: capped(clamped, "limit", body.limit ?? TAVILY_DEFAULT.limit, 10_000, "Quarry crawls at most 10000 pages a job"),
      max_depth: body.max_depth ?? TAVILY_DEFAULT.max_depth,
      formats: [body.format === "text" ? "text" : "markdown"],
      only_main_content: body.extract_depth !== "advanced",
      // Tavily's crawl follows links from the start, max_depth deep; it does not read sitemaps.
      sitemap: "skip",
    };
    if (body.select_paths?.length) native.include_paths = body.select_paths;
    if (body.exclude_paths?.length) native.exclude_paths = body.exclude_paths;
    if (typeof body.allow_external === "boolean") native.allow_external = body.allow_external;
    const authorization = authorizationOf(c, body.api_key);
    const job = bodyOf<{ id: string }>(await dispatch(c, { method: "POST", path: JOB_PATH.crawl, body: native, authorization }));
    // The client gives up at `timeout` itself (tavily-js and tavily-python both set it as the
    // HTTP timeout): stop waiting early enough that the answer reaches it before then.
    // A timeout under Tavily's 10 s is honoured too: the client gives up then all the same.
    const timeoutMs = (body.timeout ?? TAVILY_DEFAULT.timeout) * 1000;
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
      quarry: { ignored: asIgnored(ignored), clamped, job: job.id, status: all.status, stopped_reason: finished ? all.stopped_reason : "timeout", failed: all.failures, dropped: all.dropped },
    });
  };
}
