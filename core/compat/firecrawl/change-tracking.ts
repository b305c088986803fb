/**
 * Firecrawl's `changeTracking` format ↔ Quarry's `changes` (issue #31 item 4). v2 names its
 * options in the format's object (`{type: "changeTracking", modes: ["git-diff"], tag}`), v1 in
 * `changeTrackingOptions`. The answer is Firecrawl's `changeTracking: {previousScrapeAt,
 * changeStatus, visibility, diff?: {text, json}}`, `json` in the shape of the parse-diff package
 * Firecrawl uses. The `json` mode compares fields a model extracts: not made here, named as not applied.
 */
import { parsePatch } from "diff";

type Opts = { formats?: Array<string | { type: string }> | null; changeTrackingOptions?: unknown };

/** The native `changes_options` the caller's options ask for; adds what cannot apply to `ignored`. */
export function changesOptions(opts: Opts, ignored: Set<string>): { tag?: string; diff: boolean } {
  const entry = (opts.formats ?? []).find((f): f is { type: string } & Record<string, unknown> => typeof f === "object" && f !== null && f.type === "changeTracking");
  const from = (entry ?? (typeof opts.changeTrackingOptions === "object" && opts.changeTrackingOptions) ?? {}) as { modes?: unknown; tag?: unknown; schema?: unknown; prompt?: unknown };
  const modes = Array.isArray(from.modes) ? from.modes.filter((m): m is string => typeof m === "string") : [];
  for (const m of modes) if (m !== "git-diff") ignored.add(`changeTracking.modes.${m}`);
  if (from.schema || from.prompt) ignored.add("changeTracking.schema/prompt (the json mode)");
  const tag = typeof from.tag === "string" && from.tag.trim() ? from.tag.trim().slice(0, 100) : undefined;
  return { ...(tag ? { tag } : {}), diff: modes.includes("git-diff") };
}

interface NativeChanges {
  change_status: string;
  previous_read_at: string | null;
  visibility: string;
  diff?: string | null;
}

/** One file's hunks as parse-diff gives them: each line typed add, del or normal, with its line numbers. */
function diffJson(text: string) {
  return {
    files: parsePatch(text).map((file) => {
      let additions = 0, deletions = 0;
      const chunks = file.hunks.map((h) => {
        let oldLn = h.oldStart, newLn = h.newStart;
        const changes = h.lines.filter((l) => !l.startsWith("\\")).map((line) => {
          if (line.startsWith("+")) return additions++, { type: "add", add: true, ln: newLn++, content: line };
          if (line.startsWith("-")) return deletions++, { type: "del", del: true, ln: oldLn++, content: line };
          return { type: "normal", normal: true, ln1: oldLn++, ln2: newLn++, content: line };
        });
        return { content: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, changes, oldStart: h.oldStart, oldLines: h.oldLines, newStart: h.newStart, newLines: h.newLines };
      });
      const strip = (name: string | undefined) => (name ? name.replace(/^[ab]\//, "") : null);
      return { from: strip(file.oldFileName), to: strip(file.newFileName), chunks, additions, deletions };
    }),
  };
}

/** Quarry's `changes` as Firecrawl's `changeTracking`; undefined when the page was not compared. */
export function changeTracking(changes: NativeChanges | null | undefined): Record<string, unknown> | undefined {
  if (!changes) return undefined;
  return {
    previousScrapeAt: changes.previous_read_at,
    changeStatus: changes.change_status,
    visibility: changes.visibility,
    ...(typeof changes.diff === "string" ? { diff: { text: changes.diff, json: diffJson(changes.diff) } } : {}),
  };
}
