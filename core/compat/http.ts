/**
 * What every compatibility route shares: reading a foreign JSON body, and answering an error
 * in the foreign service's shape and status code (its "dialect"), with Quarry's code, message
 * and request id kept where the client does not look. Translation only: no business logic.
 */
import type { Context } from "hono";
import * as v from "valibot";
import { ApiError, echoed, toApiError } from "../errors.ts";
import type { AppEnv } from "../gateway/context.ts";
import { MAX_BODY_BYTES, objectBody, readCapped, refuseEncoded, tooLarge } from "../gateway/guard.ts";
import { validOrThrow } from "../gateway/validate.ts";
import type { Logger } from "../ports.ts";
import type { NativeAnswer, NativeError } from "./dispatch.ts";
import { refuseTargets, type Target } from "../schema/targets.ts";

/** A refusal or failure of the native request, carried back to the compatibility route. */
export class NativeFailure extends Error {
  constructor(readonly status: number, readonly error: NativeError, readonly headers?: Headers) {
    super(error.message);
  }
}

/** The native answer's body, or the native failure thrown for the route to translate. */
export function bodyOf<T>(answer: NativeAnswer): T {
  if (!answer.ok) throw new NativeFailure(answer.status, answer.error, answer.headers);
  return answer.body as T;
}

export interface Dialect {
  /** The status the original service uses for this Quarry error code. */
  status(code: string, quarryStatus: number): number;
  /** The original service's error body. */
  body(error: NativeError): Record<string, unknown>;
  /** The error in this service's words, where they differ from the native route's (how its key is sent). */
  reword?(error: NativeError, request: Request): NativeError;
}

/** A JSON body of at most 64 KiB; a missing Content-Type is taken for JSON (some clients send none). */
export async function readJson(c: Context<AppEnv>): Promise<unknown> {
  if (Number(c.req.header("content-length") ?? "0") > MAX_BODY_BYTES) throw tooLarge();
  const type = c.req.header("content-type");
  if (type && !/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError("unsupported_media_type", "Send the body as JSON with 'Content-Type: application/json'.");
  }
  refuseEncoded(c.req.header("content-encoding"));
  const raw = c.req.raw.body ? await readCapped(c.req.raw.body) : "";
  if (raw.trim() === "") throw new ApiError("invalid_request", "A JSON request body is required.");
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError("invalid_request", "The request body is not valid JSON.");
  }
}

/** Reads and validates a foreign body against its (loose) schema; 400 in the route's dialect otherwise. */
export async function readBody<S extends v.GenericSchema>(c: Context<AppEnv>, schema: S): Promise<v.InferOutput<S>> {
  return validOrThrow(schema, objectBody(await readJson(c)));
}

/** Wraps a compatibility handler: every failure leaves in the dialect, with X-Request-Id and Retry-After kept. */
export function compatHandler(dialect: Dialect, logger: Logger, route: string, fn: (c: Context<AppEnv>) => Promise<Response>): (c: Context<AppEnv>) => Promise<Response> {
  return async (c) => {
    c.set("route", route);
    try {
      return await fn(c);
    } catch (err) {
      const requestId = c.get("requestId") ?? "req_unknown";
      if (err instanceof NativeFailure) return failure(c, dialect, err.status, err.error, err.headers);
      const apiErr = toApiError(err);
      if (apiErr.status >= 500) {
        logger.error({ req_id: requestId, err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, apiErr.code);
      }
      const error: NativeError = { code: apiErr.code, message: apiErr.message, request_id: requestId };
      if (apiErr.extra.details?.length) error.details = apiErr.extra.details;
      return failure(c, dialect, apiErr.status, error, new Headers(apiErr.extra.headers ?? {}));
    }
  };
}

function failure(c: Context<AppEnv>, dialect: Dialect, status: number, error: NativeError, headers?: Headers): Response {
  for (const name of ["retry-after", "allow"]) {
    const value = headers?.get(name);
    if (value) c.header(name, value);
  }
  const said = dialect.reword ? dialect.reword(error, c.req.raw) : error;
  return c.json(dialect.body(said), dialect.status(said.code, status) as 400);
}

/** Seconds with two decimals, as Tavily's `response_time`. */
export const secondsSince = (startedAt: number, now: number): number => Math.round((now - startedAt) / 10) / 100;

/** Option names a request set to something other than "off", among those a mapping could not honour. */
export function ignoredOptions(body: Record<string, unknown>, honoured: ReadonlySet<string>): string[] {
  return Object.entries(body)
    .filter(([k, val]) => !honoured.has(k) && val !== undefined && val !== null && val !== false && !(Array.isArray(val) && val.length === 0))
    .map(([k]) => k)
    .sort();
}

export type Method = "GET" | "POST" | "DELETE";

/** A compatibility route: mounted on the app beside the native ones, outside the OpenAPI document. */
export interface CompatRoute {
  method: Method | "PUT" | "PATCH";
  path: string;
  handler: (c: Context<AppEnv>) => Promise<Response>;
  /** A catch-all under a foreign API's base: unknown paths and methods answered in its dialect. */
  fallback?: boolean;
}

function matches(pattern: string, path: string): boolean {
  const p = pattern.split("/");
  const s = path.replace(/\/+$/, "").split("/");
  return p.length === s.length && p.every((seg, i) => (seg.startsWith(":") ? s[i] !== "" : seg === s[i]));
}

/** 404 or 405 (naming the methods there are) for whatever the API's own routes do not answer, in its dialect. */
export function fallbackRoutes(base: string, dialect: Dialect, logger: Logger, routes: CompatRoute[]): CompatRoute[] {
  const handler = compatHandler(dialect, logger, `${base}/*`, async (c) => {
    const allowed = routes.filter((r) => matches(r.path, c.req.path)).map((r) => r.method);
    if (allowed.length) {
      throw new ApiError("method_not_allowed", `${c.req.method} is not allowed on ${echoed(c.req.path, 128)}; use ${allowed.join(", ")}.`, { headers: { Allow: allowed.join(", ") } });
    }
    throw new ApiError("not_found", `No such endpoint: ${c.req.method} ${echoed(c.req.path, 128)}.`);
  });
  return (["GET", "POST", "DELETE", "PUT", "PATCH"] as const).flatMap((method) => [base, `${base}/*`].map((path) => ({ method, path, handler, fallback: true })));
}

/** Builds the routes of one foreign API: its base path, its dialect for errors. */
export function routeMaker(base: string, dialect: Dialect, logger: Logger) {
  return (method: Method, path: string, fn: (c: Context<AppEnv>) => Promise<Response>): CompatRoute => ({
    method,
    path: base + path,
    handler: compatHandler(dialect, logger, base + path, fn),
  });
}

/** The field names an object schema accepts, looking through `v.pipe(v.strictObject(…), checks…)`. */
export function fieldsOf(schema: v.GenericSchema): Set<string> {
  let s: unknown = schema;
  while (s && typeof s === "object" && !("entries" in s) && "pipe" in s) s = (s as { pipe: unknown[] }).pipe[0];
  const entries = s && typeof s === "object" && "entries" in s ? (s as { entries: Record<string, unknown> }).entries : {};
  return new Set(Object.keys(entries));
}

/** An option a mapping could not apply, in native search's words (`meta.ignored`). */
export interface Ignored {
  option: string;
  reason: string;
  backends?: string[];
}

export const NO_SUCH_OPTION = "Quarry has no such option; accepted and not applied";
export const asIgnored = (names: string[], reason = NO_SUCH_OPTION): Ignored[] => names.map((option) => ({ option, reason }));

/**
 * Milliseconds a compatible call may work when its client gives up after `seconds` (tavily-js
 * and tavily-python use the request's `timeout` as their HTTP timeout): a margin short of it,
 * so the answer, with what failed, reaches the client instead of its own timeout error.
 */
export function beforeClientTimeout(seconds: number): number {
  return Math.round(seconds * 1000 - Math.min(5000, Math.max(1000, seconds * 100)));
}

/**
 * Tavily and Firecrawl check a target URL's scheme with the rest of the body, so another scheme
 * than http(s) is their 400 for invalid parameters (Firecrawl's "unsupported protocol"), where
 * Quarry's own routes answer 422 `url_not_allowed`. Checked before the native call, in Quarry's
 * words, naming each field as the caller wrote it; nothing is fetched or counted.
 */
export function refuseSchemesAsInvalid(targets: Target[]): void {
  try {
    refuseTargets(targets, { schemeOnly: true });
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError("invalid_request", err.message, err.extra);
    throw err;
  }
}
