/**
 * URL normalisation for deduplication: the same page reached through different spellings
 * (www., default port, trailing slash, fragment, tracking parameters, parameter order,
 * needless percent-encoding) gets one form. RFC 3986 §6 for the syntax-based steps.
 */

/** Query parameters that only track the visitor; exact names (lowercase). */
const TRACKING_PARAMS = new Set([
  "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "igshid",
  "mc_cid", "mc_eid", "mkt_tok", "_hsenc", "_hsmi", "hsctatracking", "vero_id", "vero_conv", "oly_anon_id",
  "oly_enc_id", "rb_clickid", "s_cid", "srsltid", "spm", "ref", "ref_src", "ref_url", "referrer", "_ga", "_gl",
]);
/** Parameter prefixes that only track: utm_source, utm_medium, …, pk_campaign (Matomo), … */
const TRACKING_PREFIXES = ["utm_", "pk_", "mtm_", "hsa_"];

export function isTrackingParam(name: string): boolean {
  const lower = name.toLowerCase();
  return TRACKING_PARAMS.has(lower) || TRACKING_PREFIXES.some((p) => lower.startsWith(p));
}

/** Decodes percent-escapes of unreserved characters and upper-cases the rest (RFC 3986 §6.2.2). */
function normalizeEscapes(path: string): string {
  return path.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** The hostname without a leading `www.` and trailing dot, lowercase. */
export function bareHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, "").replace(/^www\./, "");
}

function parse(url: string): URL | null {
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : null;
  } catch {
    return null;
  }
}

/** Query string without tracking parameters; `sort` orders the rest by name then value. */
function cleanQuery(params: URLSearchParams, sort: boolean): string {
  const kept = [...params].filter(([name]) => !isTrackingParam(name));
  if (sort) kept.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return kept.length ? `?${new URLSearchParams(kept).toString()}` : "";
}

/** Everything after `scheme://` of the canonical form. */
function canonicalRest(u: URL): string {
  const port = u.port ? `:${u.port}` : ""; // URL already drops the scheme's default port
  const path = normalizeEscapes(u.pathname).replace(/\/+$/, "");
  return `${bareHost(u.hostname)}${port}${path}${cleanQuery(u.searchParams, true)}`;
}

/**
 * Canonical form: lowercase scheme and host, no `www.`, no default port, no credentials,
 * no fragment, no trailing slash, no tracking parameters, remaining parameters sorted.
 * Non-http(s) or unparsable input comes back trimmed and otherwise unchanged.
 */
export function normalizeUrl(url: string): string {
  const u = parse(url);
  return u ? `${u.protocol}//${canonicalRest(u)}` : url.trim();
}

/** The deduplication key: the normalised URL without its scheme, so http and https meet. */
export function dedupKey(url: string): string {
  const u = parse(url);
  return u ? canonicalRest(u) : url.trim();
}

/**
 * The citation of a collection's document that has no http(s) URL of its own (text the account sent,
 * api.md §11): `quarry://collections/<name>/documents/<id>`, the id percent-encoded, which is the path
 * of the document under /v1 (`GET /v1/collections/<name>/documents/<id>`). Stable: the same document
 * is cited the same way in every answer.
 */
export const COLLECTION_DOC_URL = "quarry://collections/";

export function collectionDocUrl(collection: string, id: string): string {
  return `${COLLECTION_DOC_URL}${collection}/documents/${encodeURIComponent(id)}`;
}

export function isCollectionDocUrl(url: string): boolean {
  return url.startsWith(COLLECTION_DOC_URL);
}

/**
 * Dedup key and bare hostname from one parse (the merge's hot path); null for non-web URLs. A
 * collection document's citation is its own key, with no host (no domain filter includes it).
 */
export function urlIdentity(url: string): { key: string; host: string } | null {
  if (isCollectionDocUrl(url)) return { key: url, host: "" };
  const u = parse(url);
  return u ? { key: canonicalRest(u), host: bareHost(u.hostname) } : null;
}

/** For display: the URL as the engine gave it, minus tracking parameters (order and fragment kept). */
export function stripTracking(url: string): string {
  const u = parse(url);
  if (!u || ![...u.searchParams.keys()].some(isTrackingParam)) return url;
  u.search = cleanQuery(u.searchParams, false);
  return u.href;
}
