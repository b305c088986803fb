/**
 * The URLs a request asks Quarry to reach — a page to scrape, a site to map or crawl, each
 * entry of a batch, a webhook to deliver to — checked alike on every route: a URL that is not
 * a URL at all is a 400 of the body's validation (`TargetUrl`); one Quarry will not reach (a
 * scheme other than http or https, and for a job the checks that need no DNS) is a 422
 * `url_not_allowed` naming each field (api.md §4), before anything is fetched or counted.
 */
import * as v from "valibot";
import { ApiError, type FieldIssue } from "../errors.ts";
import type { AllowList } from "../net/allow-list.ts";
import { checkUrl } from "../net/url-policy.ts";

/** An absolute URL of at most 2048 characters; its scheme is checked by `refuseTargets`. */
export const TargetUrl = (field: string) =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.trim(),
    v.maxLength(2048, `${field} must be at most 2048 characters`),
    v.url(`${field} must be an absolute URL`),
  );

export interface Target {
  /** The field as the caller wrote it: `url`, `urls.3`, `webhook.url`. */
  field: string;
  url: string;
}

/** A URL that starts so has the scheme http or https (WHATWG: nothing before it is dropped but what `trim` took). */
const HTTP_PREFIX = /^https?:\/\//;

/** The details list of a refusal names at most this many fields. */
const MAX_NAMED = 20;

/**
 * Throws the 422 `url_not_allowed` for the targets Quarry will not reach, each named in
 * `details`; the message names the first. `schemeOnly` refuses only other schemes than http(s)
 * (scrape and map leave addresses to the guarded fetch; a batch skips private entries and
 * reads the rest); otherwise every check the URL policy makes without resolving the host.
 */
export function refuseTargets(targets: Target[], options: { allow?: AllowList; schemeOnly?: boolean } = {}): void {
  const issues: FieldIssue[] = [];
  for (const { field, url } of targets) {
    // Only the scheme can refuse here, and a URL written `http://` or `https://` has one of the two
    // (if it parses at all; one that does not is the body schema's to refuse, not this): no parse and
    // no address checks for it (a fifteenth of a cached scrape's CPU on Bun, issue #33).
    if (options.schemeOnly && HTTP_PREFIX.test(url)) continue;
    const check = checkUrl(url, options.allow);
    if (!check.ok && (!options.schemeOnly || check.reason === "scheme")) issues.push({ field, message: check.message });
  }
  if (!issues.length) return;
  const first = issues[0]!;
  const more = issues.length > 1 ? ` (${issues.length - 1} more in details)` : "";
  throw new ApiError("url_not_allowed", `${first.field}: ${first.message}${more}`, { details: issues.slice(0, MAX_NAMED) });
}
