/**
 * Shared helpers of the video tests: the recorded YouTube fixtures and a replay fetch that
 * serves them by URL (search, continuation, player per video id, captions per `v`), the way a
 * local replay server would. It records every request so tests can check where calls went.
 */
import { fixture } from "../backends/helpers.ts";
import type { FetchPort } from "../../core/ports.ts";
import type { BackendRunStatus } from "../../core/backends/runner.ts";
import type { ApiError } from "../../core/errors.ts";
import type { VideoSearchResponseBody } from "../../core/operations/video/schema.ts";

export { answer, FakeClock, fixture } from "../backends/helpers.ts";

export const yt = (name: string) => fixture(`youtube/${name}`);

/** When the recordings were made (search pages: ~2026-01-26): relative dates are read against it. */
export const RECORDED_AT = Date.UTC(2026, 0, 26, 18, 0, 0);

export const BASE = "http://replay.test/yt";

export type Reply = string | { status: number; body: string; headers?: Record<string, string> } | "hang";

export interface ReplayRoutes {
  search?: Reply;
  continuation?: Reply;
  /** Player answers by requested video id; `default` for the rest. */
  players?: Record<string, Reply>;
  /** Caption answers by the `v` parameter of the caption URL; `default` for the rest. */
  captions?: Record<string, Reply>;
  /** Answers for other upstreams (Data API, Invidious), by URL prefix (origin + path). */
  others?: Record<string, Reply>;
}

export interface Call {
  method: string;
  url: string;
  body: Record<string, unknown> | null;
}

function respond(reply: Reply | undefined, signal: AbortSignal | undefined): Promise<Response> {
  if (reply === undefined) return Promise.resolve(new Response("not recorded", { status: 404 }));
  if (reply === "hang") {
    return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
  }
  const r = typeof reply === "string" ? { status: 200, body: reply } : reply;
  return Promise.resolve(new Response(r.body, { status: r.status, headers: r.headers }));
}

export function replayFetch(routes: ReplayRoutes) {
  const calls: Call[] = [];
  const fetch: FetchPort = async (input, init) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const text = req.method === "POST" ? await req.text() : "";
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    calls.push({ method: req.method, url: req.url, body });
    const url = new URL(req.url);
    const signal = init?.signal ?? undefined;
    const other = Object.keys(routes.others ?? {}).find((prefix) => req.url.startsWith(prefix));
    if (other !== undefined) return respond(routes.others![other], signal);
    if (!req.url.startsWith(BASE + "/")) return Promise.reject(new TypeError(`unexpected host: ${req.url}`));
    const path = url.pathname.slice(new URL(BASE).pathname.length);
    if (path === "/youtubei/v1/search") return respond(body?.continuation ? routes.continuation : routes.search, signal);
    if (path === "/youtubei/v1/player") {
      const id = String(body?.videoId);
      return respond(routes.players?.[id] ?? routes.players?.default, signal);
    }
    if (path === "/api/timedtext") {
      const v = url.searchParams.get("v") ?? "";
      return respond(routes.captions?.[v] ?? routes.captions?.default, signal);
    }
    return respond(undefined, signal);
  };
  return { fetch, calls };
}

/** What a video search came to: its body, or the ApiError it threw (with each backend's status). */
export type VideoSearchOutcome =
  | { ok: true; body: VideoSearchResponseBody }
  | { ok: false; error: { code: string; message: string; backends: Record<string, BackendRunStatus> } };

export function outcomeOf(pending: Promise<VideoSearchResponseBody>): Promise<VideoSearchOutcome> {
  return pending.then(
    (body) => ({ ok: true, body }),
    (err: ApiError) => ({ ok: false, error: { code: err.code, message: err.message, backends: err.extra.fields?.backends as Record<string, BackendRunStatus> } }),
  );
}
