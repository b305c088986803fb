/**
 * Path patterns callers send (crawl and map `include_paths`/`exclude_paths`, Tavily's
 * `select_paths`) are regular expressions that the server runs, in its own thread, against paths
 * the crawled site chooses. A backtracking engine can take exponential or high polynomial time on
 * a path made to fail a pattern ((a+)+$, a*a*a*a*b), stalling every request of the process, and no
 * check of a pattern's shape catches all such cases. So the patterns run on RE2's automaton
 * (re2js), whose time is linear in the path's length whatever the pattern. Its syntax is
 * JavaScript's without lookaround and backreferences; a pattern that uses them is refused.
 */
import { RE2JS } from "re2js";

/** A compiled path pattern: `test` finds a match anywhere in the path, as `RegExp.prototype.test` does. */
export interface PathPattern {
  test(path: string): boolean;
}

/** The compiled pattern, or null when RE2 cannot run it (not a regular expression, or lookaround/backreferences). */
export function compilePathPattern(pattern: string): PathPattern | null {
  try {
    return RE2JS.compile(pattern);
  } catch {
    return null;
  }
}

/** The sentence every refusal of a pattern ends with. */
export const PATTERN_RULE = "a regular expression without lookaround or backreferences (patterns run in linear time on RE2's syntax)";
