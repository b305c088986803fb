/**
 * Optional enrichment of search results through the YouTube Data API v3 (`videos.list`), on
 * only when the operator set `QUARRY_YOUTUBE_KEY`: exact upload dates and view counts replace
 * the search cards' approximate ones. One call per request. Any failure (403 quota, bad key,
 * network, deadline, unreadable answer) is a value: results stay as they were.
 */
import { buildVideosRequest, DATA_API_BASE, parseVideosResponse, type DataApiVideo } from "../../backends/youtube/data-api.ts";
import type { BackendRunStatus } from "../../backends/runner.ts";
import type { Clock, FetchPort } from "../../ports.ts";

export const DATA_API_BACKEND = "youtube_data_api";

export interface DataApiSettings {
  key: string;
  /** Default https://www.googleapis.com (DATA_API_BASE); tests and proxies pass another. */
  baseUrl?: string;
}

export interface EnrichIo {
  fetch: FetchPort;
  clock: Clock;
  signal: AbortSignal;
}

export interface EnrichOutcome {
  videos: Map<string, DataApiVideo> | null;
  status: BackendRunStatus;
}

export async function fetchVideoDetails(io: EnrichIo, settings: DataApiSettings, ids: readonly string[]): Promise<EnrichOutcome> {
  const started = io.clock.now();
  const status = (s: BackendRunStatus["status"], results: number, error?: string): BackendRunStatus => ({
    status: s,
    results,
    latency_ms: Math.max(0, Math.round(io.clock.now() - started)),
    ...(error ? { error } : {}),
  });
  try {
    const res = await io.fetch(buildVideosRequest(settings.baseUrl ?? DATA_API_BASE, ids, settings.key), { signal: io.signal });
    const parsed = parseVideosResponse(res.status, await res.text());
    if (!parsed.ok) return { videos: null, status: status("error", 0, parsed.error) };
    return { videos: parsed.videos, status: status("ok", parsed.videos.size) };
  } catch (err) {
    // Never echo the request URL: it carries the key.
    if (io.signal.aborted) return { videos: null, status: status("timeout", 0, "deadline reached") };
    return { videos: null, status: status("error", 0, `network: ${err instanceof Error ? err.name : "failure"}`) };
  }
}
