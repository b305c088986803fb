/**
 * The job model (api.md §9): a crawl or a batch scrape, its frontier of URLs and the pages it
 * has read. Everything here is plain data, stored as is by every JobStore.
 */
import type { RenderAction } from "./render.ts";

export type JobKind = "crawl" | "batch";
export type JobStatus = "queued" | "running" | "completed" | "failed" | "cancelled";
/** The statuses a job ends in (its `TERMINAL` ones). */
export type FinalStatus = "completed" | "failed" | "cancelled";
export const TERMINAL: ReadonlySet<JobStatus> = new Set(["completed", "failed", "cancelled"]);

/** Why a job stopped before its frontier was done. */
export type StoppedReason = "limit_reached" | "quota_exceeded" | "deadline" | "site_refused" | "site_unreachable" | "storage_full" | "cancelled";

export type PageFormat = "markdown" | "text" | "html" | "raw_html" | "links" | "screenshot" | "changes";
export type RenderMode = "auto" | "always" | "never";
export type WebhookEvent = "started" | "page" | "completed" | "failed" | "cancelled";

/** What the caller asked for; fixed when the job is created. */
export interface JobSpec {
  url: string | null;
  limit: number;
  maxDepth: number;
  includePaths: string[];
  excludePaths: string[];
  allowSubdomains: boolean;
  allowExternal: boolean;
  respectRobots: boolean;
  /** A crawl's sitemaps (api.md §9): `include` them with the links, use `only` them, or `skip` them. Absent on jobs stored before the option: skip. */
  sitemap?: "include" | "skip" | "only";
  formats: PageFormat[];
  onlyMainContent: boolean;
  timeoutMs: number;
  /** Rendering (api.md §10), as on scrape. Absent on jobs stored before rendering: "auto". */
  render?: RenderMode;
  waitFor?: string | number | null;
  actions?: RenderAction[] | null;
  /** api.md §12: `none`, `auto` or a pool of QUARRY_PROXIES, and where reads should come from. Absent on older jobs: auto, none. */
  proxy?: string;
  location?: { country?: string; languages?: string[] } | null;
  webhook: { url: string; secret: string | null; events: WebhookEvent[] } | null;
  /** The account's collection every page read is indexed in (api.md §11); absent: none. */
  collection?: string | null;
  /** With the `changes` format (issue #31): the tag its pages' reads are compared under ("" for none), and whether to diff. */
  changes?: { tag: string; diff: boolean };
}

export interface JobRecord {
  id: string;
  kind: JobKind;
  account: string;
  keyId: string;
  status: JobStatus;
  /** Milliseconds since the epoch. */
  createdAt: number;
  finishedAt: number | null;
  /** Work stops here whatever is left (QUARRY_JOB_DEADLINE). */
  deadlineAt: number;
  /** The job and its pages are deleted after this (finishedAt + QUARRY_JOB_TTL). */
  expiresAt: number | null;
  discovered: number;
  completed: number;
  failed: number;
  skipped: number;
  stoppedReason: StoppedReason | null;
  spec: JobSpec;
  /** Bytes its rows hold (pages as stored, URLs found), counted toward its account's `jobs_storage_bytes`. Absent: none counted yet. */
  bytes?: number;
  /** What its caps left out (issue #28); absent: nothing yet. */
  dropped?: JobDropped;
}

/** What a job's storage caps left out: the job's answer names it as `dropped`. */
export interface JobDropped {
  /** Links found on its pages past the per-page cap (QUARRY_JOB_PAGE_LINKS), not followed. */
  links: number;
  /** Bytes of page content cut to the per-page cap (QUARRY_JOB_PAGE_BYTES); each such page names its `truncated` formats. */
  contentBytes: number;
  /** Skipped URLs past the job's 1,000 listed: counted here, not listed (and not told apart from each other). */
  skippedUrls: number;
  /** Pages read but not stored because the account's job storage was full (`storage_full`; not charged). */
  pages: number;
}

/** One unit of work: fetch this URL for this job. */
export interface JobTask {
  jobId: string;
  url: string;
  depth: number;
}

/** A URL the job chose not to fetch, and why (robots.txt, a private address, a URL trap). */
export interface SkippedUrl {
  url: string;
  reason: string;
}

/** What reading one page produced. `ok` pages count toward the quota; failed ones do not. */
export interface PageResult {
  url: string;
  ok: boolean;
  statusCode: number;
  title: string | null;
  /** The requested formats (markdown, text, html, links), plus final_url and metadata. */
  data: Record<string, unknown>;
  error: string | null;
}

export interface StoredPage extends PageResult {
  /** Order in which the job recorded its pages, from 1. */
  seq: number;
}

/** What recording a page did: `recorded` is false when another worker got there first. */
export interface FinishResult {
  recorded: boolean;
  /** New frontier entries (the caller hands them to the queue). */
  added: JobTask[];
  /** True when the job's discovery was cut by its limit. */
  limited: boolean;
  /** Frontier entries of the job not yet finished, after this one. */
  remaining: number;
  /** The account's job storage was full: the page was stored without its content, as failed (`storage_full`), and the job should stop. */
  full?: boolean;
}
