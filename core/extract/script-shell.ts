/**
 * Whether a static page is a script shell, whose text only a browser would see. Scrape's
 * `render: "auto"` renders those in a browser (core/pages/render.ts); ordinary pages stay
 * on the fast path. It runs where the page is extracted, which holds both the HTML and the text.
 *
 * A shell has a script that can write content (tag managers and analytics only measure), and one
 * of: an empty application root; a <noscript> asking for JavaScript; an inline script that moves
 * the page elsewhere (location.replace); no text but a placeholder ("Loading…"); or <main> and
 * <article> elements that are all (nearly) empty, or none and an empty application root, even
 * under a long static header and footer. Holders inside inert markup (a <template> a script
 * stamps in, a <noscript>) do not count; a declarative shadow root's do.
 * A short page whose few words are real text (a notice) is no shell: rendering would not add any.
 */

/** As many words in the static main text, and a page is read as it is (unless its content holders or root are empty). */
const SHELL_WORDS = 60;
/** Up to as many words, and the static main text may be an empty page's remains ("Loading…", "Redirecting…"). */
const EMPTY_WORDS = 3;
/** Fewer words than this in every <main> and <article>, and they hold no content. */
const HOLDER_WORDS = 5;
/** Above this the static text is the page's, whatever its empty holders (a comments <article> a script fills). */
const MAX_WORDS_UNDER_EMPTY_HOLDERS = 300;

const APP_ROOT = /<(div|main|section|app-root)\b[^>]*\bid=["']?(root|app|__next|__nuxt|svelte|main-app|application)\b[^>]*>\s*<\/\1>/i;
const PLACEHOLDER = /^\W*(loading|please wait|redirecting|one moment|just a moment)\b/i;
const SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script>/gi;
/** Scripts that only measure or advertise: they add no text to a page. */
const MEASURING = /googletagmanager|google-analytics|\bgtag\(|\bdataLayer\b|\b_paq\b|plausible\.io|matomo|cdn\.segment|hotjar|clarity\.ms|\bfbq\(|connect\.facebook\.net|doubleclick|googlesyndication/i;
const CLIENT_REDIRECT = /\blocation\s*(\.\s*(replace|assign)\s*\(|(\.\s*href)?\s*=[^=])/;

/** Words, each Chinese or Japanese character counted as one (those scripts put no spaces between words). */
function countWords(text: string, stopAt: number): number {
  let words = 0;
  for (const _ of text.matchAll(/[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]|[^\s\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+/g)) if (++words >= stopAt) break;
  return words;
}

/** The page's scripts that could write content (not data blocks, not measuring); and whether one redirects. */
function contentScripts(html: string): { any: boolean; redirects: boolean } {
  let any = false;
  let redirects = false;
  for (const [, attrs, body] of html.matchAll(SCRIPT)) {
    const type = /\btype=["']?([^"'\s>]+)/i.exec(attrs!)?.[1]?.toLowerCase();
    if (type && !/^(module|text\/javascript|application\/javascript)$/.test(type)) continue;
    if (MEASURING.test(attrs!) || MEASURING.test(body!)) continue;
    any = true;
    if (CLIENT_REDIRECT.test(body!)) redirects = true;
  }
  return { any, redirects };
}

/**
 * Markup a browser does not show as the page: scripts, <noscript> (scripts run there) and
 * <template>s, whose content is inert until a script stamps it in. Not a declarative shadow root
 * (`<template shadowrootmode>`): the browser attaches that one at parse time, and it is shown.
 * A <main> or <article> inside these is no content holder, full or empty.
 */
const INERT = /<(script|style|noscript)\b[\s\S]*?<\/\1>|<template\b(?![^>]*\bshadowroot(?:mode)?=)[^>]*>[\s\S]*?<\/template>/gi;

/**
 * What the page's <main> and <article> elements hold: "none" when it has none, "empty" when none
 * holds text (its content is still to come), "filled" otherwise. One holding <meta> is a
 * microdata wrapper (schema.org properties), not where the text goes.
 */
function holders(html: string): "none" | "empty" | "filled" {
  let seen = false;
  for (const [, , inner] of html.replace(INERT, " ").matchAll(/<(main|article)(?=[\s>])[^>]*>([\s\S]*?)<\/\1>/gi)) {
    if (/<meta\b/i.test(inner!)) continue;
    seen = true;
    const text = inner!.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]*>/g, " ");
    if (countWords(text, HOLDER_WORDS) >= HOLDER_WORDS) return "filled";
  }
  return seen ? "empty" : "none";
}

/** `text`: the main content's text, asked for only when the page has scripts (a page without is no shell). */
export function looksLikeShell(html: string, text: () => string): boolean {
  if (!/<script\b/i.test(html)) return false;
  const scripts = contentScripts(html);
  if (!scripts.any) return false;
  const main = text();
  const words = countWords(main, MAX_WORDS_UNDER_EMPTY_HOLDERS);
  if (words >= MAX_WORDS_UNDER_EMPTY_HOLDERS) return false;
  // The static text, however long, is a header's and a footer's when the content holders are empty,
  // or when there are none and the application root is.
  const held = holders(html);
  const emptyRoot = APP_ROOT.test(html);
  if (held === "empty" || (held === "none" && emptyRoot)) return true;
  if (words >= SHELL_WORDS) return false;
  const askingForJs = /<noscript\b[^>]*>[\s\S]{0,2000}?\b(javascript|enable|js)\b/i.test(html);
  return emptyRoot || askingForJs || scripts.redirects || words <= EMPTY_WORDS || PLACEHOLDER.test(main);
}
