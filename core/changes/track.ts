/**
 * Change tracking (issue #31): a read compared with the same account's previous read of the same
 * URL (under the same tag), and kept in its place for the next one. Scrape, crawl and batch pages
 * and monitors all come through here, so they agree on what `new`, `same`, `changed` and
 * `removed` mean:
 * - new: no earlier read of the URL is kept for this account and tag;
 * - same / changed: the page's markdown is (not) the same as last time;
 * - removed: the page now answers 404 or 410, and did not last time (or was never read);
 *   a page still gone is `same`, a page back after being gone is `changed`.
 * Other failures (a 500, a 403, no answer) say nothing about the page: they are not compared and
 * not kept, so the next good read compares against the last good one.
 */
import { sha256Hex } from "../keys/secret.ts";
import { createTwoFilesPatch } from "diff";
import type { PageRead, ReadHistory } from "../ports/reads.ts";

export type ChangeStatus = "new" | "same" | "changed" | "removed";

/** What the caller asked: the tag its reads are kept under ("" for none), and whether to diff. */
export interface ChangesAsk {
  tag: string;
  diff: boolean;
}

/** The `changes` format's answer. */
export interface PageChanges {
  change_status: ChangeStatus;
  /** When the read compared against was made (ISO 8601); null when there was none. */
  previous_read_at: string | null;
  /** `visible`: the page answers now; `hidden`: it is gone (404/410). */
  visibility: "visible" | "hidden";
  tag: string | null;
  /** Asked for (`diff: true`): a git-style unified diff of the markdown from the previous read to this one; "" when the same, null when there is nothing to compare against. */
  diff?: string | null;
}

/** Statuses that say the page is gone. */
export const GONE_STATUSES: ReadonlySet<number> = new Set([404, 410]);

/** Markdown kept per read, in characters: a diff compares what was kept. */
export const KEPT_MARKDOWN_CHARS = 512 * 1024;

/** Longest a diff may compute before it gives up (null diff, status still exact from the digest). */
const DIFF_TIMEOUT_MS = 2_000;

/** The key a URL's reads are kept under: the URL without its fragment. */
export function readKey(url: string): string {
  try {
    const u = new URL(url);
    u.hash = "";
    return u.href;
  } catch {
    return url;
  }
}

/** Whether a read with this status can be compared: it answered (below 400) or it is gone. */
export const comparable = (status: number): boolean => status > 0 && (status < 400 || GONE_STATUSES.has(status));

/** A git-style unified diff of the markdown (`a/markdown` → `b/markdown`); null when it took too long. */
export function markdownDiff(before: string, after: string): string | null {
  if (before === after) return "";
  const patch = createTwoFilesPatch("a/markdown", "b/markdown", before, after, undefined, undefined, { context: 3, timeout: DIFF_TIMEOUT_MS });
  if (typeof patch !== "string") return null;
  return `diff --git a/markdown b/markdown\n${patch.replace(/^=+\n/, "")}`;
}

/**
 * Compares this read with the account's previous one and keeps it in its place. `markdown` is
 * the page's whole markdown (null when the page is gone). Null when the read cannot be compared
 * (see `comparable`): nothing is kept then.
 */
export async function trackChanges(
  reads: ReadHistory,
  account: string,
  url: string,
  ask: ChangesAsk,
  read: { status: number; markdown: string | null },
  now: number,
): Promise<PageChanges | null> {
  if (!comparable(read.status)) return null;
  const gone = GONE_STATUSES.has(read.status);
  const markdown = gone ? "" : (read.markdown ?? "");
  const current: PageRead = { readAt: now, statusCode: read.status, gone, digest: gone ? "" : sha256Hex(markdown), markdown: markdown.slice(0, KEPT_MARKDOWN_CHARS) };
  const previous = await reads.exchange(account, ask.tag, readKey(url), current);
  const status: ChangeStatus = !previous
    ? gone ? "removed" : "new"
    : gone ? (previous.gone ? "same" : "removed")
    : previous.gone ? "changed"
    : previous.digest === current.digest ? "same" : "changed";
  const out: PageChanges = {
    change_status: status,
    previous_read_at: previous ? new Date(previous.readAt).toISOString() : null,
    visibility: gone ? "hidden" : "visible",
    tag: ask.tag || null,
  };
  if (ask.diff) out.diff = !previous ? null : status === "same" ? "" : markdownDiff(previous.markdown, current.markdown);
  return out;
}
