/**
 * `proxy` and `location` (api.md §12), taken alike by scrape, crawl and batch scrape: which of the
 * operator's proxies a read may use, and where it should seem to come from. A pool name is
 * checked against the server's pools before anything is read (escalate.ts `checkProxyChoice`).
 */
import * as v from "valibot";

export const ProxyFields = {
  proxy: v.optional(v.pipe(
    v.string('proxy must be "none", "auto" or a pool name'),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/, 'proxy must be "none", "auto" or a pool name'),
    v.description('"auto" (default): static, then the browser, then a proxy when the site blocks; "none": never a proxy; or one pool of QUARRY_PROXIES'),
  ), "auto"),
  location: v.optional(v.pipe(
    v.strictObject({
      country: v.optional(v.pipe(v.string("location.country must be a string"), v.regex(/^[A-Za-z]{2}$/, "location.country must be a two-letter country code (ISO 3166-1)"), v.toLowerCase())),
      languages: v.optional(v.pipe(
        v.array(v.pipe(v.string("each language must be a string"), v.regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "each language must be a language tag such as de or de-AT")), "location.languages must be an array"),
        v.maxLength(10, "location.languages takes at most 10 languages"),
      )),
    }, "location must be an object: {country, languages}"),
    v.description("Read through a proxy tagged with this country, sending Accept-Language for these languages; meta.location_note says when no proxy has that country"),
  )),
};
