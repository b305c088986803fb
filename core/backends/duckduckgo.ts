/**
 * DuckDuckGo through its no-JavaScript HTML endpoint (what a browser without JS is sent to).
 * There is no official API: this is scraping, so the parser tells a bot challenge or the
 * JavaScript shell apart from "no results" — treating a block as an empty answer would hide it.
 * https://html.duckduckgo.com/html/ (form fields as on the page: q, kl region, df date filter, s offset)
 */
import { lib } from "../lazy.ts";
import type { Backend, BackendError, ParseOutcome, RawResult } from "./types.ts";
import { httpFailure, isWebUrl, languageParts, parseFailure, upstreamUrl } from "./upstream.ts";

const FRESHNESS = { day: "d", week: "w", month: "m", year: "y" } as const;
/** The first answer page holds 30 results; the page's own "Next" form posts s=30, dc=31. */
const PAGE_SIZE = 30;
/** Regions for a bare language tag; DDG's own codes (note `uk`, not `gb`). */
const DEFAULT_REGION: Record<string, string> = {
  de: "de-de", fr: "fr-fr", es: "es-es", it: "it-it", nl: "nl-nl", pt: "br-pt", ja: "jp-jp", pl: "pl-pl",
};

/** DDG's regions (`kl`) by ISO country code, from its settings page; `uk` is Great Britain. */
const REGIONS: Record<string, readonly string[]> = {
  AR: ["ar-es"], AT: ["at-de"], AU: ["au-en"], BE: ["be-nl", "be-fr"], BG: ["bg-bg"], BR: ["br-pt"], CA: ["ca-en", "ca-fr"],
  CH: ["ch-de", "ch-fr", "ch-it"], CL: ["cl-es"], CN: ["cn-zh"], CO: ["co-es"], CZ: ["cz-cs"], DE: ["de-de"], DK: ["dk-da"],
  EE: ["ee-et"], ES: ["es-es"], FI: ["fi-fi"], FR: ["fr-fr"], GB: ["uk-en"], GR: ["gr-el"], HK: ["hk-tzh"], HR: ["hr-hr"],
  HU: ["hu-hu"], ID: ["id-id", "id-en"], IE: ["ie-en"], IL: ["il-he"], IN: ["in-en"], IT: ["it-it"], JP: ["jp-jp"], KR: ["kr-kr"],
  LT: ["lt-lt"], LV: ["lv-lv"], MX: ["mx-es"], MY: ["my-ms", "my-en"], NL: ["nl-nl"], NO: ["no-no"], NZ: ["nz-en"], PE: ["pe-es"],
  PH: ["ph-en", "ph-tl"], PL: ["pl-pl"], PT: ["pt-pt"], RO: ["ro-ro"], RU: ["ru-ru"], SE: ["se-sv"], SG: ["sg-en"], SI: ["sl-sl"],
  SK: ["sk-sk"], TH: ["th-th"], TR: ["tr-tr"], TW: ["tw-tzh"], UA: ["ua-uk"], US: ["us-en", "us-es"], VE: ["ve-es"], VN: ["vn-vi"],
  ZA: ["za-en"],
};
export const DDG_COUNTRIES = Object.keys(REGIONS);

/** `de-AT` → `at-de`; a bare `en` searches all regions (`wt-wt`); a country wins over the tag's region. */
export function ddgRegion(language: string, country?: string): string {
  const { lang, region } = languageParts(language);
  const regions = country ? REGIONS[country] : undefined;
  if (regions) return regions.find((r) => r.endsWith(`-${lang}`)) ?? regions[0]!;
  if (region) return `${region === "gb" ? "uk" : region}-${lang}`;
  return DEFAULT_REGION[lang] ?? "wt-wt";
}

/** Result links are redirects `/l/?kh=-1&uddg=<encoded target>`; newer pages link directly. */
export function unwrapDdgLink(href: string): string | null {
  let url: URL;
  try {
    url = new URL(href, "https://duckduckgo.com");
  } catch {
    return null;
  }
  const target = /(^|\.)duckduckgo\.com$/.test(url.hostname) ? url.searchParams.get("uddg") : url.href;
  return target && isWebUrl(target) ? target : null;
}

/** The anomaly page DDG puts in front of requests it takes for a bot (HTTP 200 or 202). */
function isChallenge(document: Document, body: string): boolean {
  return (
    document.querySelector("#challenge-form, .anomaly-modal__modal, form[action*='anomaly']") !== null ||
    body.includes("bots use DuckDuckGo too")
  );
}

/** The JavaScript-only results shell: no result markup at all, only a redirect for no-JS browsers. */
function isJavaScriptShell(document: Document): boolean {
  // querySelector, not document.body: linkedom throws on `body` when the markup has no root element.
  const cls = document.querySelector("body")?.getAttribute("class") ?? "";
  return !/\bbody--html\b/.test(cls) && (/\bbody--serp\b/.test(cls) || document.querySelector("noscript") !== null);
}

function squash(text: string | null | undefined): string {
  return (text ?? "").replace(/\s+/g, " ").trim();
}

function blocked(cls: "captcha" | "blocked", message: string): ParseOutcome {
  const error: BackendError = { class: cls, message };
  return { ok: false, error };
}

export const duckduckgo: Backend = {
  about: {
    id: "duckduckgo",
    kind: "web",
    defaultBaseUrl: "https://html.duckduckgo.com",
    docs: "https://duckduckgo.com/duckduckgo-help-pages/settings/params/",
    supports: { countries: DDG_COUNTRIES, dates: "window" },
  },

  buildRequest(query, cfg) {
    const form = new URLSearchParams({ q: query.query, kl: ddgRegion(query.language, query.country) });
    if (query.freshness) form.set("df", FRESHNESS[query.freshness]);
    if (query.page && query.page > 1) {
      const offset = (query.page - 1) * PAGE_SIZE;
      form.set("s", String(offset));
      form.set("dc", String(offset + 1));
    }
    // POST like the page's own search form; a URLSearchParams body sets the form content type.
    return new Request(upstreamUrl(cfg.baseUrl, "/html/", {}), {
      method: "POST",
      body: form,
      headers: { accept: "text/html", "accept-language": query.language },
    });
  },

  parseResponse(res, query): ParseOutcome {
    if (res.status !== 200 && res.status !== 202) return { ok: false, error: httpFailure(res, "DuckDuckGo") };
    const { document } = lib("linkedom").parseHTML(res.body);
    if (isChallenge(document, res.body)) return blocked("captcha", "DuckDuckGo answered with a bot challenge");
    // 202 is DDG's answer to traffic it considers automated, even without the challenge markup.
    if (res.status === 202) {
      return { ok: false, error: { class: "rate_limited", message: "DuckDuckGo answered HTTP 202 (rate limited)" } };
    }

    const results: RawResult[] = [];
    for (const node of document.querySelectorAll("div.result")) {
      if (results.length >= query.maxResults) break;
      if (node.classList.contains("result--ad")) continue;
      const link = node.querySelector("a.result__a");
      const url = unwrapDdgLink(link?.getAttribute("href") ?? "");
      if (!link || !url) continue;
      results.push({
        title: squash(link.textContent),
        url,
        content: squash(node.querySelector(".result__snippet")?.textContent),
        published_at: null, // the HTML endpoint shows no dates
        rank: results.length + 1,
      });
    }
    if (results.length > 0) return { ok: true, results };
    if (document.querySelector(".no-results") !== null) return { ok: true, results: [] };
    if (isJavaScriptShell(document)) {
      return blocked("blocked", "DuckDuckGo served its JavaScript-only page instead of results");
    }
    return { ok: false, error: parseFailure("DuckDuckGo", "page has neither results nor a no-results notice") };
  },
};
