/**
 * Path patterns callers send (crawl `include_paths`/`exclude_paths`, Tavily's `select_paths`) are
 * regular expressions that the server runs, in its own thread, against paths the crawled site
 * chooses. A pattern that repeats a group which itself repeats or alternates ((a+)+, (a|a)*,
 * (\w+\s?)*) backtracks exponentially on a path made to fail it: one such link stalls every
 * request of the process for minutes. Those shapes are refused before any job starts.
 */

/** Why a pattern cannot be used, or null when it can: not a regular expression, or one that backtracks exponentially. */
export function patternProblem(pattern: string): "invalid" | "exponential" | null {
  try {
    new RegExp(pattern);
  } catch {
    return "invalid";
  }
  return repeatsRepetition(pattern) ? "exponential" : null;
}

interface Frame {
  /** The group holds a quantifier that repeats (*, +, {n,}, {n,m} with m > 1). */
  repeats: boolean;
  /** The group holds an alternation at its own level. */
  alternates: boolean;
}

/** Reads a quantifier at `i`: its length and whether it repeats, or null when there is none. */
function quantifierAt(p: string, i: number): { length: number; repeats: boolean } | null {
  const ch = p[i];
  let length = 0;
  let repeats = false;
  if (ch === "*" || ch === "+") [length, repeats] = [1, true];
  else if (ch === "?") [length, repeats] = [1, false];
  else if (ch === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
    if (!m) return null;
    const max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3]);
    [length, repeats] = [m[0].length, max > 1];
  } else return null;
  if (p[i + length] === "?") length++; // lazy
  return { length, repeats };
}

/** Whether a repeated group holds a repetition or an alternation (star height above one). */
function repeatsRepetition(p: string): boolean {
  const stack: Frame[] = [{ repeats: false, alternates: false }];
  let i = 0;
  while (i < p.length) {
    const ch = p[i];
    if (ch === "\\") {
      i += 2;
    } else if (ch === "[") {
      i++;
      if (p[i] === "^") i++;
      if (p[i] === "]") i++;
      while (i < p.length && p[i] !== "]") i += p[i] === "\\" ? 2 : 1;
      i++;
    } else if (ch === "(") {
      stack.push({ repeats: false, alternates: false });
      i++;
      if (p[i] === "?") {
        // (?: (?= (?! (?<= (?<! (?<name>
        const m = /^\?(?::|=|!|<=|<!|<[^>]*>)/.exec(p.slice(i));
        i += m ? m[0].length : 1;
      }
      continue;
    } else if (ch === ")") {
      const group = stack.length > 1 ? stack.pop()! : { repeats: false, alternates: false };
      const q = quantifierAt(p, i + 1);
      if (q?.repeats && (group.repeats || group.alternates)) return true;
      const top = stack[stack.length - 1];
      top.repeats ||= group.repeats || !!q?.repeats;
      i += 1 + (q?.length ?? 0);
      continue;
    } else if (ch === "|") {
      stack[stack.length - 1].alternates = true;
      i++;
      continue;
    } else {
      i++;
    }
    // After an atom (an escape, a class or a plain character): its quantifier, if any.
    const q = quantifierAt(p, i);
    if (q) {
      if (q.repeats) stack[stack.length - 1].repeats = true;
      i += q.length;
    }
  }
  return false;
}
