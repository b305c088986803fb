/**
 * What YouTube answers instead of JSON when it will not serve us: the consent interstitial
 * (EU addresses without a CONSENT cookie are redirected to consent.youtube.com) and the
 * "unusual traffic" reCAPTCHA page (served with HTTP 429). Both are blocks, never "no results".
 */
import type { BackendError, UpstreamResponse } from "../types.ts";
import { httpFailure } from "../upstream.ts";

export function isConsentPage(body: string): boolean {
  return /consent\.(youtube|google)\.com/i.test(body) && /<form\b/i.test(body);
}

export function isCaptchaPage(body: string): boolean {
  return /g-recaptcha|id="captcha-page"|unusual traffic|\/sorry\/index/i.test(body);
}

function looksLikeHtml(body: string): boolean {
  return /^\s*(<!doctype html|<html\b)/i.test(body);
}

/**
 * The failure an answer represents, or null when it is a 2xx JSON answer for the parser.
 * A CAPTCHA page is a rate limit (it goes away with time, and arrives as HTTP 429).
 */
export function youtubeFailure(res: UpstreamResponse, what: string): BackendError | null {
  const html = looksLikeHtml(res.body);
  const captcha = html && isCaptchaPage(res.body);
  if (res.status === 429 || captcha) {
    const failure = httpFailure({ ...res, status: 429 }, what);
    // A plain 429 (no CAPTCHA page) is said as one, with its Retry-After: calling it a CAPTCHA misled.
    if (!captcha) return failure;
    return { ...failure, message: `${what} answered with its "unusual traffic" CAPTCHA page (HTTP ${res.status})` };
  }
  if (html && isConsentPage(res.body)) {
    return { class: "blocked", message: `${what} redirected to its cookie consent page instead of answering` };
  }
  if (res.status < 200 || res.status > 299) return httpFailure(res, what);
  if (html) return { class: "parse", message: `${what}: HTML page instead of JSON` };
  return null;
}
