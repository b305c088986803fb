/**
 * Tavily `POST /extract` → one native `POST /v1/scrape` per URL (each one unit of the `scrape`
 * group, as the native calls would be). The first URL goes alone: a refusal of the key (bad
 * key, missing scope, exhausted quota) answers the whole request in Tavily's error shape. Any
 * later failure, and every page that could not be read, is an entry of `failed_results`.
 */
import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../gateway/context.ts";
import { authorizationOf, GATEWAY_REFUSALS, type Dispatch, type NativeAnswer } from "../dispatch.ts";
import { asIgnored, beforeClientTimeout, ignoredOptions, NativeFailure, readBody, secondsSince } from "../http.ts";
import { pool } from "../../pool.ts";

const MAX_URLS = 20;
const PARALLEL = 4;

export const TavilyExtractBody = v.looseObject({
  urls: v.union([
    v.string("urls must be a URL or a list of URLs"),
    v.pipe(v.array(v.string("each URL must be a string"), "urls must be a URL or a list of URLs"), v.minLength(1, "urls must not be empty"), v.maxLength(MAX_URLS, `urls takes at most ${MAX_URLS} URLs`)),
  ], "urls must be a URL or a list of URLs"),
  api_key: v.optional(v.nullable(v.string())),
  extract_depth: v.optional(v.nullable(v.picklist(["basic", "advanced"], "extract_depth must be basic or advanced"))),
  format: v.optional(v.nullable(v.picklist(["markdown", "text"], "format must be markdown or text"))),
  timeout: v.optional(v.nullable(v.number("timeout must be a number of seconds"))),
  include_usage: v.optional(v.nullable(v.unknown())),
});
type ExtractRequest = v.InferOutput<typeof TavilyExtractBody>;

const HONOURED = new Set(["urls", "api_key", "extract_depth", "format", "timeout", "include_usage"]);

interface NativeScrape {
  meta: { final_url: string; status_code: number };
  data: { title: string | null; markdown?: string; text?: string };
}

/** The client's own timeout: the request's `timeout`, else tavily-js's and tavily-python's default. */
const CLIENT_DEFAULT_SECONDS = 30;
/** A page's limit when no `timeout` is given. */
const PAGE_DEFAULT_MS = 15_000;

function nativeScrape(body: ExtractRequest, url: string, leftMs: number) {
  const format = body.format === "text" ? "text" : "markdown";
  const pageMs = givenTimeout(body) === null ? PAGE_DEFAULT_MS : 60_000;
  // `advanced` is Tavily's deeper extraction (tables, embedded content): the whole page, not just its main part.
  return { url, formats: [format], only_main_content: body.extract_depth !== "advanced", timeout_ms: Math.min(pageMs, Math.max(1000, Math.round(leftMs))) };
}

const givenTimeout = (body: ExtractRequest): number | null => (typeof body.timeout === "number" && body.timeout > 0 ? body.timeout : null);

type Outcome = { ok: true; result: Record<string, unknown> } | { ok: false; failed: { url: string; error: string } };

function outcome(body: ExtractRequest, url: string, answer: NativeAnswer): Outcome {
  // A failed result names its URL already: a refusal's words without the native field name ("url: ").
  const only = answer.ok ? undefined : answer.error.details?.length === 1 ? answer.error.details[0] : undefined;
  if (!answer.ok) return { ok: false, failed: { url, error: only?.field === "url" ? only.message : answer.error.message } };
  const res = answer.body as NativeScrape;
  if (res.meta.status_code >= 400) return { ok: false, failed: { url, error: `The page answered HTTP ${res.meta.status_code}.` } };
  const raw = (body.format === "text" ? res.data.text : res.data.markdown) ?? "";
  return { ok: true, result: { url, title: res.data.title, raw_content: raw, images: [] } };
}

export function tavilyExtract(dispatch: Dispatch, now: () => number) {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, TavilyExtractBody);
    const urls = typeof body.urls === "string" ? [body.urls] : body.urls;
    const authorization = authorizationOf(c, body.api_key);
    // `timeout` bounds the whole request, as Tavily's does: the URLs share it, and the client
    // stops waiting at that moment (a URL left no time is a failed result, not a lost answer).
    const seconds = givenTimeout(body) ?? CLIENT_DEFAULT_SECONDS;
    const deadline = (c.get("startedAt") ?? now()) + beforeClientTimeout(seconds);
    const call = async (url: string): Promise<NativeAnswer> => {
      const left = deadline - now();
      if (left < 1000 && url !== urls[0]) return { ok: false, status: 504, headers: new Headers(), error: { code: "timeout", message: `Not read: the request's timeout (${seconds} s) ran out first.`, request_id: c.get("requestId") ?? "" } };
      return dispatch(c, { method: "POST", path: "/v1/scrape", body: nativeScrape(body, url, left), authorization });
    };
    const first = await call(urls[0]!);
    if (!first.ok && GATEWAY_REFUSALS.has(first.error.code)) throw new NativeFailure(first.status, first.error, first.headers);
    const outcomes: Outcome[] = [outcome(body, urls[0]!, first)];
    // The rest PARALLEL at a time, each starting as soon as one ends (a slow page holds one place, not a batch).
    const rest = urls.slice(1);
    (await pool(rest, PARALLEL, call)).forEach((a, j) => outcomes.push(outcome(body, rest[j]!, a)));
    const results = outcomes.flatMap((o) => (o.ok ? [o.result] : []));
    return c.json({
      results,
      failed_results: outcomes.flatMap((o) => (o.ok ? [] : [o.failed])),
      response_time: secondsSince(c.get("startedAt") ?? now(), now()),
      request_id: c.get("requestId") ?? "",
      ...(body.include_usage ? { usage: { credits: results.length } } : {}),
      quarry: { ignored: asIgnored(ignoredOptions(body as Record<string, unknown>, HONOURED)) },
    });
  };
}
