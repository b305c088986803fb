/**
 * The page reader the job engine is handed (api.md §9: each page is read as POST /v1/scrape
 * reads it). The engine declares what it calls and imports no operation: services.ts wires in
 * core/pages/page-data.ts's `readJobPage`, and tests may hand it another reader.
 */
import type { PageFormat, RenderMode } from "../ports/job-model.ts";
import type { RenderAction } from "../ports/render.ts";

/** One page of a job to read, with the job's formats and render fields. */
export interface JobPageRequest {
  url: string;
  formats: readonly PageFormat[];
  only_main_content: boolean;
  timeout_ms: number;
  render: RenderMode;
  wait_for?: string | number;
  actions?: RenderAction[];
  /** Ends the fetch or render at once (the job cancelled, the process stopping). */
  signal?: AbortSignal;
  /** The account the page is read for: browser slots are shared fairly between accounts. */
  account?: string;
  /** api.md §12, as on scrape: every page starts at its host's remembered step. */
  proxy?: string;
  location?: { country?: string; languages?: string[] };
}

/** What reading it gave: how it was read, and its data (null for a content type Quarry does not read). */
export interface JobPageRead {
  read: { finalUrl: string; status: number; contentType: string | null; body: Uint8Array; rendered: boolean };
  /** The metadata, `rendered` (and `render_note`), then the formats asked for: stored as the page's data. */
  data: { title: string | null; markdown?: unknown } | null;
  /** The page's whole markdown when the formats asked for `changes` (it is compared with the last read); null when none was read. */
  markdown?: string | null;
}

export type JobPageReader = (req: JobPageRequest) => Promise<JobPageRead>;
