/**
 * Reading native jobs (api.md §9) for the compatible APIs: a job's pages come in slices of at
 * most 100 (`?skip=N`, the native `next`), and a synchronous foreign call (Tavily's crawl) waits
 * on the job's event stream, one request however long the job runs, rather than polling the
 * status (every poll would count in the key's per-minute window).
 */
import type { Context } from "hono";
import type { AppEnv } from "../gateway/context.ts";
import type { Dispatch } from "./dispatch.ts";
import { bodyOf } from "./http.ts";

export type JobKind = "crawl" | "batch";
export const JOB_PATH: Record<JobKind, string> = { crawl: "/v1/crawl", batch: "/v1/batch/scrape" };

export interface NativeJobPage {
  url: string; status_code: number; title: string | null; final_url?: string;
  markdown?: string; text?: string; html?: string; raw_html?: string; links?: Array<{ text: string; url: string; main?: boolean }>; error?: string;
  rendered?: boolean; render_note?: string; screenshot?: string; truncated?: string[];
  changes?: { change_status: string; previous_read_at: string | null; visibility: string; diff?: string | null } | null;
}

export interface NativeJob {
  id: string;
  status: "queued" | "running" | "completed" | "failed" | "cancelled";
  created_at: string; finished_at: string | null; expires_at: string | null;
  discovered: number; completed: number; failed: number; skipped: number;
  stopped_reason: string | null;
  stored_bytes: number;
  /** What the job's storage caps left out (issue #28). */
  dropped: { links: number; content_bytes: number; skipped_urls: number; pages: number };
  data: NativeJobPage[];
  failures: Array<{ url: string; status_code: number; error: string }>;
  skipped_urls: Array<{ url: string; reason: string }>;
  /** Only for a job with a webhook. */
  webhook?: { url: string; delivered: number; pending: number; failed: number; last_error: { event: string; at: string; error: string } | null };
  next: string | null;
}

export const FINISHED = new Set(["completed", "failed", "cancelled"]);

/** The `skip` of a native `next` URL, or null. */
export function skipOf(next: string | null): number | null {
  if (!next) return null;
  const skip = new URL(next, "http://x").searchParams.get("skip");
  return skip !== null && /^\d+$/.test(skip) ? Number(skip) : null;
}

/** `?skip=N` of the request being answered, for the native call (validated there). */
export function skipQuery(c: Context<AppEnv>): string {
  const skip = c.req.query("skip");
  return skip === undefined ? "" : `?skip=${encodeURIComponent(skip)}`;
}

export async function jobSlice(dispatch: Dispatch, c: Context<AppEnv>, kind: JobKind, id: string, authorization: string | undefined, skip = ""): Promise<NativeJob> {
  return bodyOf<NativeJob>(await dispatch(c, { method: "GET", path: `${JOB_PATH[kind]}/${encodeURIComponent(id)}${skip}`, authorization }));
}

/** Every slice of a job, up to `maxPages` pages (the first slice's counts and status). */
export async function wholeJob(dispatch: Dispatch, c: Context<AppEnv>, kind: JobKind, id: string, authorization: string | undefined, maxPages = 10_000): Promise<NativeJob> {
  const first = await jobSlice(dispatch, c, kind, id, authorization);
  const all = { ...first, data: [...first.data], failures: [...first.failures], skipped_urls: [...first.skipped_urls] };
  let skip = skipOf(first.next);
  while (skip !== null && all.data.length < maxPages) {
    const next = await jobSlice(dispatch, c, kind, id, authorization, `?skip=${skip}`);
    all.data.push(...next.data);
    all.failures.push(...next.failures);
    skip = skipOf(next.next);
  }
  all.next = null;
  return all;
}

/**
 * Waits until the job ends or `deadline` (ms since epoch) passes, on the native event stream.
 * Returns false on the deadline (the stream is dropped; the job runs on).
 */
export async function waitForJob(dispatch: Dispatch, c: Context<AppEnv>, kind: JobKind, id: string, authorization: string | undefined, deadline: number, now: () => number): Promise<boolean> {
  const answer = await dispatch(c, { method: "GET", path: `${JOB_PATH[kind]}/${encodeURIComponent(id)}/events`, authorization });
  if (!answer.ok) bodyOf(answer);
  if (answer.ok && answer.body !== null) return true; // a JSON answer: nothing to wait for
  const body = answer.ok ? answer.response.body : null;
  if (!body) return true;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  try {
    for (;;) {
      const left = deadline - now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<"late">((r) => (timer = setTimeout(() => r("late"), left))),
      ]).finally(() => clearTimeout(timer));
      if (chunk === "late") return false;
      if (chunk.done) return true;
      seen = (seen + chunk.value).slice(-4096);
      if (/"status"\s*:\s*"(completed|failed|cancelled)"/.test(seen)) return true;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
