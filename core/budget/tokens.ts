/**
 * Token counting with the `o200k_base` encoding (api.md §5), through gpt-tokenizer (pure
 * JavaScript, runs on Node, Deno and Bun). Text is counted as plain text: a transcript that
 * happens to contain `<|endoftext|>` is just characters, never a special token (the library's
 * default would throw on it).
 */
import { countTokens as count, decode, encode } from "gpt-tokenizer/encoding/o200k_base";

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Tokens of `text` in o200k_base. This is what `meta.tokens_used` sums. */
export function countTokens(text: string): number {
  return text ? count(text, PLAIN) : 0;
}

/**
 * The longest prefix of `text` of at most `maxTokens` tokens, cut back to a word boundary
 * when the cut falls inside a word. Verified by recounting, so the limit holds exactly.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0 || !text) return "";
  // Encoding the whole of a long text to keep a short prefix wastes time: no token is shorter
  // than one character, so a prefix of 8 characters per token always holds enough tokens.
  const head = text.length > maxTokens * 8 ? text.slice(0, maxTokens * 8) : text;
  const tokens = encode(head, PLAIN);
  if (tokens.length <= maxTokens && head === text) return text;
  let keep = Math.min(maxTokens, tokens.length);
  for (;;) {
    let prefix = decode(tokens.slice(0, keep)).replace(/\uFFFD+$/, "");
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
