/**
 * Token counting with the `o200k_base` encoding (api.md §5), through gpt-tokenizer (pure
 * JavaScript, runs on Node, Deno and Bun). Text is counted as plain text: a transcript that
 * happens to contain `<|endoftext|>` is just characters, never a special token (the library's
 * default would throw on it).
 *
 * The encoding's tables take ~60 MB and ~0.4 s to load, so they load when first needed:
 * `loadTokenizer()` (core/lazy.ts, with the other lazily loaded libraries; the gateway awaits it
 * before every metered operation, and each operation does too); the counting functions are
 * synchronous once it has resolved.
 */
import { tokenizer as enc } from "../lazy.ts";

export { loadTokenizer, tokenizerLoaded } from "../lazy.ts";

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Tokens of `text` in o200k_base. This is what `meta.tokens_used` sums. */
export function countTokens(text: string): number {
  return text ? enc().countTokens(text, PLAIN) : 0;
}

/** Token ids of `text` (plain text, no special tokens). */
export function encodeTokens(text: string): number[] {
  return enc().encode(text, PLAIN);
}

export function decodeTokens(tokens: number[]): string {
  return enc().decode(tokens);
}

/**
 * Characters per o200k token to try first: English prose runs about 4.3, ASR transcripts
 * about 5, so one encode usually suffices; denser scripts just encode a longer head.
 */
const FIRST_GUESS_CHARS_PER_TOKEN = 6;

/**
 * The longest prefix of `text` of at most `maxTokens` tokens, cut back to a word boundary
 * when the cut falls inside a word. Verified by recounting, so the limit holds exactly.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0 || !text) return "";
  // Encoding all of a long text to keep a short prefix wastes time: encode a prefix that
  // probably holds enough tokens, and a longer one only when it did not.
  let headLength = maxTokens * FIRST_GUESS_CHARS_PER_TOKEN;
  let tokens: number[];
  for (;;) {
    const head = text.length > headLength ? text.slice(0, headLength) : text;
    tokens = encodeTokens(head);
    if (head.length === text.length) {
      if (tokens.length <= maxTokens) return text;
      break;
    }
    if (tokens.length > maxTokens) break;
    // Too few tokens in the head: grow it by the observed ratio, with a margin.
    headLength = Math.ceil((headLength * maxTokens * 1.2) / Math.max(1, tokens.length));
  }
  let keep = maxTokens;
  for (;;) {
    let prefix = decodeTokens(tokens.slice(0, keep)).replace(/\uFFFD+$/, "");
    const insideWord = /\S$/.test(prefix) && /\S/.test(text[prefix.length] ?? " ");
    if (insideWord) {
      const space = prefix.search(/\s\S*$/);
      if (space > 0) prefix = prefix.slice(0, space);
    }
    prefix = prefix.trimEnd();
    if (countTokens(prefix) <= maxTokens) return prefix;
    keep--; // re-encoding a decoded prefix can, rarely, take a token more
    if (keep <= 0) return "";
  }
}
