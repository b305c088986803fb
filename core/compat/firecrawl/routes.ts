/**
 * Firecrawl's scrape and search, v2 and v1: the same translation, each version's envelope.
 * v2 answers `{success, data}` (search: `data.web` / `data.news`); v1 search answers `data` as
 * a list of documents.
 */
import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../gateway/context.ts";
import { authorizationOf, type Dispatch } from "../dispatch.ts";
import { asIgnored, bodyOf, NO_SUCH_OPTION, readBody, refuseSchemesAsInvalid } from "../http.ts";
import { withScheme } from "./checks.ts";
import { ignoredWarning, ScrapeOptions, toDocument, toNativeScrape } from "./scrape.ts";
import { FirecrawlSearchBody, toNativeSearch, webResult, type NativeSearch } from "./search.ts";

const ScrapeBody = v.looseObject({ ...ScrapeOptions.entries, url: v.string("url must be a string") });

export function firecrawlScrape(dispatch: Dispatch, canRender: () => boolean, version: "v1" | "v2") {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, ScrapeBody);
    const url = withScheme(body.url);
    refuseSchemesAsInvalid([{ field: "url", url }]);
    const plan = toNativeScrape(url, body, ["url"], canRender(), "", version === "v1");
    const native = bodyOf<Parameters<typeof toDocument>[1]>(await dispatch(c, { method: "POST", path: "/v1/scrape", body: plan.native, authorization: authorizationOf(c) }));
    const doc = toDocument(plan, native);
    return c.json({
      success: true,
      data: doc,
      ...(doc.warning ? { warning: doc.warning } : {}),
      quarry: { ignored: asIgnored(plan.ignored), clamped: plan.clamped, meta: native.meta },
    });
  };
}

export function firecrawlSearch(dispatch: Dispatch, version: "v1" | "v2") {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, FirecrawlSearchBody);
    const plan = toNativeSearch(body);
    const native = bodyOf<NativeSearch>(await dispatch(c, { method: "POST", path: "/v1/search", body: plan.native, authorization: authorizationOf(c) }));
    const results = native.results.map((r, i) => webResult(plan, r, i + 1));
    const ignored = [...asIgnored(plan.ignored), ...(native.meta.ignored ?? [])];
    const notApplied = ignored.map((i) => (i.reason === NO_SUCH_OPTION ? i.option : `${i.option} (${i.reason})`));
    const warning = notApplied.length ? { warning: ignoredWarning(notApplied) } : {};
    const data = version === "v1" ? results : plan.news ? { web: [], news: results.map(({ description, ...r }) => ({ ...r, snippet: description })) } : { web: results };
    return c.json({
      success: true,
      data,
      ...warning,
      id: c.get("requestId"),
      creditsUsed: 1,
      quarry: { ignored, meta: native.meta },
    });
  };
}
