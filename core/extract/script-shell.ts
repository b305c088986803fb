/**
 * Whether a static page is a script shell: scripts, little or no text, and either an empty
 * application root, a <noscript> asking for JavaScript, or almost no text at all. Scrape's
 * `render: "auto"` renders those in a browser (operations/scrape/render.ts); ordinary pages stay
 * on the fast path. It runs where the page is extracted, which holds both the HTML and the text.
 */

/** Fewer words than this in the static main text, and a page may be a shell. */
const SHELL_WORDS = 60;
const APP_ROOT = /<(div|main|section|app-root)\b[^>]*\bid=["']?(root|app|__next|__nuxt|svelte|main-app|application)\b[^>]*>\s*<\/\1>/i;

/** `text`: the main content's text, asked for only when the page has scripts (a page without is no shell). */
export function looksLikeShell(html: string, text: () => string): boolean {
  if (!/<script\b/i.test(html)) return false;
  let words = 0;
  for (const _ of text().matchAll(/\S+/g)) if (++words >= SHELL_WORDS) return false;
  const askingForJs = /<noscript\b[^>]*>[\s\S]{0,2000}?\b(javascript|enable|js)\b/i.test(html);
  return APP_ROOT.test(html) || askingForJs || words < 15;
}
