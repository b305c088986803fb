/**
 * Bot walls, in one place (issue #32, api.md §12). A block is a 403, 429 or 503 answer whose
 * headers or body carry the marker of a challenge, a captcha form, or a known bot-wall page. An
 * error page that merely says 403 is not a block: the site answered, and scrape returns it with
 * its status as always. Each marker here has a fixture and a test (tests/unit/blocks.test.ts,
 * tests/fixtures/blocks/).
 *
 * Only the first 64 KiB of the body are looked at: walls are small pages, and a big 403 page with
 * a captcha widget somewhere deep in its content is a page, not a wall.
 */

export type BlockKind = "challenge" | "captcha" | "bot_wall";

export interface Block {
  /** Who put the wall up, e.g. `cloudflare`, `datadome`, `recaptcha`. */
  vendor: string;
  kind: BlockKind;
  /** The HTTP status it came with. */
  status: number;
}

interface Marker {
  vendor: string;
  kind: BlockKind;
  /** Matched against the lowercased response header `name`'s value (present = match when no pattern). */
  header?: { name: string; value?: RegExp };
  /** Matched against the body's first 64 KiB. */
  body?: RegExp;
}

export const BLOCK_STATUSES: ReadonlySet<number> = new Set([403, 429, 503]);
const HEAD_BYTES = 64 * 1024;

/**
 * The markers, most specific first (a Cloudflare challenge embeds Turnstile: it is Cloudflare's).
 * Sources: each vendor's public challenge pages as served to scripted clients.
 */
export const BLOCK_MARKERS: readonly Marker[] = [
  // Cloudflare: managed/JS challenge ("Just a moment..."), its header, and the "Attention Required" block page.
  { vendor: "cloudflare", kind: "challenge", header: { name: "cf-mitigated", value: /challenge/i } },
  { vendor: "cloudflare", kind: "challenge", body: /<title>\s*just a moment\.\.\.\s*<\/title>|window\._cf_chl_opt|\/cdn-cgi\/challenge-platform\/|cf-chl-(?:bypass|widget|opt)/i },
  { vendor: "cloudflare", kind: "bot_wall", body: /attention required! \| cloudflare|cf-error-details|sorry, you have been blocked/i },
  // Akamai Bot Manager / Edge: "Access Denied … Reference #18.…" from errors.edgesuite.net.
  { vendor: "akamai", kind: "bot_wall", body: /errors\.edgesuite\.net|you don't have permission to access "?http[^<]*" on this server\.<p>\s*reference\s*&#32;&#35;/i },
  { vendor: "akamai", kind: "challenge", body: /\/_sec\/cp_challenge\/|bm-verify|sec-if-cpt-container/i },
  // PerimeterX / HUMAN: "Press & Hold" captcha.
  { vendor: "perimeterx", kind: "captcha", body: /_pxcaptcha|px-captcha|captcha\.px-cdn\.net|window\._pxappid|_pxhd/i },
  // DataDome: its captcha iframe from captcha-delivery.com, and its header.
  { vendor: "datadome", kind: "captcha", body: /captcha-delivery\.com|var dd=\{'rt':/i },
  { vendor: "datadome", kind: "bot_wall", header: { name: "x-datadome" } },
  // Imperva / Incapsula.
  { vendor: "imperva", kind: "bot_wall", body: /_incapsula_resource|incapsula incident id|request unsuccessful\. incapsula/i },
  // AWS WAF: challenge and captcha actions (header), and its challenge script.
  { vendor: "aws_waf", kind: "challenge", header: { name: "x-amzn-waf-action", value: /challenge|captcha/i } },
  { vendor: "aws_waf", kind: "challenge", body: /awswafintegration|\.awswaf\.com\/|aws-waf-token/i },
  // Sucuri website firewall.
  { vendor: "sucuri", kind: "bot_wall", body: /sucuri website firewall|sucuri\.net\/privacy-policy|cloudproxy@sucuri\.net/i },
  { vendor: "sucuri", kind: "bot_wall", header: { name: "x-sucuri-block" } },
  // Vercel's checkpoint and Kasada.
  { vendor: "vercel", kind: "challenge", header: { name: "x-vercel-mitigated", value: /challenge/i } },
  { vendor: "kasada", kind: "challenge", body: /kpsdk|\/ips\.js\?/i },
  // Captcha forms of any site: hCaptcha, reCAPTCHA, Cloudflare Turnstile.
  { vendor: "hcaptcha", kind: "captcha", body: /hcaptcha\.com\/1\/api\.js|class=["'][^"']*\bh-captcha\b/i },
  { vendor: "recaptcha", kind: "captcha", body: /(?:google|recaptcha)\.(?:com|net)\/recaptcha\/(?:api|enterprise)|class=["'][^"']*\bg-recaptcha\b/i },
  { vendor: "turnstile", kind: "captcha", body: /challenges\.cloudflare\.com\/turnstile|class=["'][^"']*\bcf-turnstile\b/i },
];

const latin1 = new TextDecoder("latin1");

/** The block this answer is, or null when it is the site's answer (whatever its status). */
export function detectBlock(status: number, headers: Headers, body: Uint8Array | string): Block | null {
  if (!BLOCK_STATUSES.has(status)) return null;
  let text: string | null = null;
  for (const m of BLOCK_MARKERS) {
    if (m.header) {
      const value = headers.get(m.header.name);
      if (value !== null && (!m.header.value || m.header.value.test(value))) return { vendor: m.vendor, kind: m.kind, status };
    }
    if (m.body) {
      text ??= typeof body === "string" ? body.slice(0, HEAD_BYTES) : latin1.decode(body.subarray(0, HEAD_BYTES));
      if (m.body.test(text)) return { vendor: m.vendor, kind: m.kind, status };
    }
  }
  return null;
}

/** A short description for messages and `meta.fetch_path`: `403 cloudflare challenge`. */
export function describeBlock(block: Block): string {
  return `${block.status} ${block.vendor} ${block.kind.replace("_", " ")}`;
}
