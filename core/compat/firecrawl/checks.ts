/**
 * What Firecrawl's own request validation refuses (its v1 and v2 request schemas, as of the
 * @mendable/firecrawl-js 4.x clients), so that the compatible routes refuse the same values with
 * a 400 naming the field, and how it reads a target URL without a scheme. Values it takes that
 * Quarry cannot honour are not refused here: the routes apply them at Quarry's bounds and say so
 * (`../clamped.ts`).
 */
import * as v from "valibot";
import { ApiError } from "../../errors.ts";

const optional = <S extends v.GenericSchema>(schema: S) => v.optional(v.nullable(schema));

/** Firecrawl's `timeout` of a page: a whole number of milliseconds, at least 1000. */
export const PageTimeout = optional(v.pipe(
  v.number("timeout must be milliseconds"),
  v.safeInteger("timeout must be a whole number of milliseconds"),
  v.minValue(1000, "timeout must be at least 1000 milliseconds"),
));
/** Firecrawl v1's scrape `timeout` when the body leaves it out (v2 and the job routes have none). */
export const V1_SCRAPE_TIMEOUT = 30_000;

/** Firecrawl's `waitFor`: whole milliseconds from 0 to 60000. */
export const WaitFor = optional(v.pipe(
  v.number("waitFor must be milliseconds"),
  v.safeInteger("waitFor must be a whole number of milliseconds"),
  v.minValue(0, "waitFor must be at least 0"),
  v.maxValue(60_000, "waitFor must be at most 60000 milliseconds"),
));

/** Firecrawl takes at most 50 actions. */
export const MAX_ACTIONS = 50;
/** Firecrawl refuses more than this much waiting in all (waitFor, wait actions, 1 s per selector wait). */
export const MAX_TOTAL_WAIT_MS = 60_000;

/** A map's `limit`: 1 to 100000 (not necessarily whole); its `timeout`: milliseconds above 0. */
export const MapLimit = optional(v.pipe(v.number("limit must be a number"), v.minValue(1, "limit must be at least 1"), v.maxValue(100_000, "limit must be at most 100000")));
export const MapTimeout = optional(v.pipe(v.number("timeout must be milliseconds"), v.gtValue(0, "timeout must be more than 0 milliseconds")));

/** A crawl's or batch's `maxConcurrency` (a whole number above 0) and a crawl's `delay` (above 0, at most 60 s): refused otherwise, not applied either way. */
export const MaxConcurrency = optional(v.pipe(v.number("maxConcurrency must be a number"), v.safeInteger("maxConcurrency must be a whole number"), v.minValue(1, "maxConcurrency must be at least 1")));
export const Delay = optional(v.pipe(v.number("delay must be a number of seconds"), v.gtValue(0, "delay must be more than 0 seconds"), v.maxValue(60, "delay is in seconds and must be at most 60")));

export function badField(field: string, message: string): ApiError {
  return new ApiError("invalid_request", `${field}: ${message}`, { details: [{ field, message }] });
}

/**
 * Firecrawl puts `http://` before a target URL that does not start with `scheme://`
 * (`example.com/page`, `localhost:3000`), then checks it as any other. Quarry does the same where
 * the result is a plain http URL, with nothing but a port after a colon in its host part; anything
 * else (`javascript:…`, `mailto:a@b.org`, `file:/etc/passwd`) is left as written, so that it is
 * refused for its scheme rather than read as a host.
 */
export function withScheme(raw: string): string {
  const url = raw.trim();
  if (/^[^.:]+:\/\//.test(url)) return url;
  const authority = url.split(/[/?#]/, 1)[0]!;
  if (authority === "" || authority.includes("@")) return raw;
  const host = authority.replace(/^\[[^\]]*\]/, "");
  if (host.includes(":") && !/^[^:]*:\d+$/.test(host)) return raw;
  const prefixed = `http://${url}`;
  return URL.canParse(prefixed) ? prefixed : raw;
}

/**
 * Firecrawl v1's `maxDepth` (default 10) counts the path segments of a URL (`/a/b` is 2, an
 * `index.html` or `index.php` segment not counted); a start URL deeper than it is refused.
 */
export function urlDepth(url: string): number {
  return new URL(url).pathname.split("/").filter((s) => s !== "" && s !== "index.php" && s !== "index.html").length;
}
