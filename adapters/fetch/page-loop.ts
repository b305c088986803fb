/**
 * The runtime-independent half of a guarded page fetch: one deadline for the whole fetch, the
 * URL check before every hop, manual redirects (each target re-checked, at most `maxRedirects`),
 * and the mapping of every failure to a typed `PageFetchError`. A runtime supplies the `Hop`:
 * one request to one already-checked URL, with its own address check at (or before) connect.
 */
import type { AllowList } from "../../core/net/allow-list.ts";
import {
  BodyTooLarge,
  EgressRefused,
  FetchTimeout,
  isPageFetchError,
  TooManyRedirects,
  UpstreamNetworkError,
} from "../../core/net/fetch-errors.ts";
import { checkUrl, type UrlAccepted } from "../../core/net/url-policy.ts";
import type { FetchPort } from "../../core/ports.ts";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_TIMEOUT_MS,
  quarryUserAgent,
  type PageRequestOptions,
  type PageResponse,
  type SafeFetch,
  type SafeFetchOptions,
} from "./types.ts";
import { readAllCapped } from "../../core/net/read-capped.ts";

export interface HopRequest {
  target: UrlAccepted;
  method: string;
  headers: Headers;
  body?: Uint8Array;
  signal: AbortSignal;
}

export interface HopResponse {
  status: number;
  headers: Headers;
  remoteAddress?: string;
  /** The decoded body, stopping (and throwing `BodyTooLarge`) past `maxBytes`. */
  readBody(maxBytes: number, signal: AbortSignal): Promise<Uint8Array>;
  /** Drops the body unread and frees the connection. */
  discard(): void;
}

export type Hop = (req: HopRequest) => Promise<HopResponse>;

export interface LoopSettings {
  allow: AllowList;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  /** What to advertise; `null` leaves it to the runtime (whose fetch decodes for itself). */
  acceptEncoding: string | null;
}

/** The options with their defaults filled in. */
export function loopSettings(options: SafeFetchOptions, acceptEncoding: string | null): LoopSettings {
  return {
    allow: options.allow,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    maxRedirects: options.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
    userAgent: options.userAgent ?? quarryUserAgent(),
    acceptEncoding,
  };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,application/pdf;q=0.8,text/plain;q=0.8,*/*;q=0.5";
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

function refusal(check: Exclude<ReturnType<typeof checkUrl>, UrlAccepted>): EgressRefused {
  return new EgressRefused(check.message, check.reason, check.internal);
}

function requestHeaders(init: HeadersInit | undefined, settings: LoopSettings): Headers {
  const headers = new Headers(init);
  headers.delete("host");
  // The honest User-Agent is not the caller's to change: sites must be able to tell who fetched.
  headers.set("user-agent", settings.userAgent);
  if (!headers.has("accept")) headers.set("accept", ACCEPT);
  if (settings.acceptEncoding) headers.set("accept-encoding", settings.acceptEncoding);
  else headers.delete("accept-encoding");
  return headers;
}

/** Runs a page fetch over `hop`, following and re-checking redirects. */
export async function runPageFetch(
  input: string | URL,
  options: PageRequestOptions,
  settings: LoopSettings,
  hop: Hop,
): Promise<PageResponse> {
  const requested = String(input);
  const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
  const maxBytes = options.maxBytes ?? settings.maxBytes;
  // One controller for the deadline and the caller's signal, both let go of when the fetch ends:
  // AbortSignal.timeout/any left a live timer and a combined signal behind for every page.
  const controller = new AbortController();
  const signal = controller.signal;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`Timed out after ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  (timer as { unref?: () => void }).unref?.();
  const callerAborted = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) callerAborted();
  else options.signal?.addEventListener("abort", callerAborted, { once: true });
  let method = (options.method ?? "GET").toUpperCase();
  let body = typeof options.body === "string" ? new TextEncoder().encode(options.body) : options.body;
  const headers = requestHeaders(options.headers, settings);
  const redirects: string[] = [];
  let current = requested;
  try {
    for (;;) {
      const check = checkUrl(current, settings.allow);
      if (!check.ok) throw refusal(check);
      signal.throwIfAborted();
      const res = await hop({ target: check, method, headers, body, signal });
      const location = REDIRECTS.has(res.status) ? res.headers.get("location") : null;
      if (location !== null && options.redirect !== "manual") {
        res.discard();
        if (options.redirect === "error") {
          throw new UpstreamNetworkError(`${check.url.href} redirected, and redirects were refused for this request.`);
        }
        if (redirects.length >= settings.maxRedirects) throw new TooManyRedirects(requested, settings.maxRedirects);
        let next: URL;
        try {
          next = new URL(location, check.url);
        } catch {
          throw new UpstreamNetworkError(`${check.url.href} redirected to an invalid URL.`);
        }
        redirects.push(check.url.href);
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
          if (method !== "HEAD") method = "GET";
          body = undefined;
          headers.delete("content-type");
          headers.delete("content-length");
        }
        if (next.origin !== check.url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
        current = next.href;
        continue;
      }
      const noBody = method === "HEAD" || res.status === 204 || res.status === 304;
      const bytes = noBody ? (res.discard(), new Uint8Array(0)) : await res.readBody(maxBytes, signal);
      return {
        url: requested,
        finalUrl: check.url.href,
        status: res.status,
        headers: res.headers,
        body: bytes,
        contentType: res.headers.get("content-type"),
        redirects,
        ...(res.remoteAddress ? { remoteAddress: res.remoteAddress } : {}),
      };
    }
  } catch (err) {
    if (err instanceof EgressRefused || err instanceof BodyTooLarge || err instanceof TooManyRedirects) throw err;
    if (timedOut) throw new FetchTimeout(requested, timeoutMs);
    if (options.signal?.aborted) throw options.signal.reason;
    if (isPageFetchError(err)) throw err;
    throw new UpstreamNetworkError(`Fetching ${requested} failed.`, String((err as Error)?.message ?? err), { cause: err });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", callerAborted);
  }
}

/** Reads a Web stream into one array, cancelling it once more than `maxBytes` arrived. */
export function readCapped(stream: ReadableStream<Uint8Array> | null, url: string, maxBytes: number): Promise<Uint8Array> {
  if (!stream) return Promise.resolve(new Uint8Array(0));
  return readAllCapped(stream, maxBytes, (received) => new BodyTooLarge(url, maxBytes, received));
}

export function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Resolves `promise`, or rejects as soon as `signal` aborts (for steps that take no signal). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

const DECODED_AWAY = ["content-encoding", "content-length", "transfer-encoding"];
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The `FetchPort` face of a page fetcher: a standard `Response` with the decoded body. The request
 * is read from `input`/`init` like `fetch` does; the URL is checked before anything is built.
 */
export function asFetchPort(fetchPage: SafeFetch["fetchPage"]): SafeFetch {
  const port: FetchPort = async (input, init) => {
    const req = input instanceof Request ? input : null;
    const url = req ? req.url : String(input);
    const method = init?.method ?? req?.method ?? "GET";
    const headers = new Headers(init?.headers ?? req?.headers);
    let body: Uint8Array | undefined;
    if (init?.body != null) body = new Uint8Array(await new Response(init.body).arrayBuffer());
    else if (req?.body) body = new Uint8Array(await req.arrayBuffer());
    const page = await fetchPage(url, {
      method,
      headers,
      body,
      signal: init?.signal ?? req?.signal ?? undefined,
      redirect: init?.redirect ?? req?.redirect,
    });
    const out = new Headers(page.headers);
    for (const name of DECODED_AWAY) out.delete(name);
    const res = new Response(NULL_BODY.has(page.status) ? null : (page.body as Uint8Array<ArrayBuffer>), {
      status: page.status,
      headers: out,
    });
    Object.defineProperty(res, "url", { value: page.finalUrl });
    Object.defineProperty(res, "redirected", { value: page.redirects.length > 0 });
    return res;
  };
  return Object.assign(port, { fetchPage });
}
