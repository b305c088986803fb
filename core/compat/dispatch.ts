/**
 * Sends a native request through the app itself, on behalf of the request being answered
 * (see gateway/internal.ts): the translation layers of the compatible APIs and the MCP tools
 * never call an operation directly, so scope, limits, quota and usage group are those of the
 * native endpoint, by construction.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../gateway/context.ts";
import { internalEnv } from "../gateway/internal.ts";

export interface NativeCall {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Path and query of the native endpoint, e.g. `/v1/search`. */
  path: string;
  body?: unknown;
  /** The caller's `Authorization` header value (`Bearer qry_…`), or undefined. */
  authorization: string | undefined;
}

/** A native error object (`{error: {code, message, request_id, …}}`). */
export interface NativeError {
  code: string;
  message: string;
  request_id: string;
  retry_after?: number;
  /** The fields a validation error or a refusal names. */
  details?: Array<{ field: string; message: string }>;
  [extra: string]: unknown;
}

export type NativeAnswer =
  | { ok: true; status: number; body: unknown; response: Response }
  | { ok: false; status: number; error: NativeError; headers: Headers };

export type Dispatch = (c: Context<AppEnv>, call: NativeCall) => Promise<NativeAnswer>;

/** Codes that refuse a request before any work: the compatible APIs answer them as errors, never as a failed item. */
export const GATEWAY_REFUSALS = new Set(["missing_auth", "invalid_auth", "invalid_key", "insufficient_scope", "rate_limited", "quota_exceeded", "service_unavailable"]);

export function dispatcher(app: () => Hono<AppEnv>): Dispatch {
  return async (c, call) => {
    const headers = new Headers({ accept: "application/json" });
    if (call.authorization) headers.set("authorization", call.authorization);
    const init: RequestInit = { method: call.method, headers };
    if (call.body !== undefined) {
      headers.set("content-type", "application/json");
      init.body = JSON.stringify(call.body);
    }
    // The origin the client called: native answers build absolute links (a job's `status_url`
    // and `next`) from it when QUARRY_PUBLIC_URL is unset, and they reach the client as they are.
    const url = new URL(call.path, new URL(c.req.url).origin).toString();
    const response = await app().fetch(new Request(url, init), internalEnv(c));
    const type = response.headers.get("content-type") ?? "";
    if (response.status >= 400) {
      const body = type.includes("json") ? await response.json().catch(() => null) : null;
      const error = (body as { error?: NativeError } | null)?.error;
      return {
        ok: false,
        status: response.status,
        headers: response.headers,
        error: error ?? { code: "internal_error", message: `Quarry answered ${response.status}.`, request_id: c.get("requestId") ?? "req_unknown" },
      };
    }
    // Streams (research with `stream: true`) are left to the caller to read.
    if (!type.includes("application/json")) return { ok: true, status: response.status, body: null, response };
    return { ok: true, status: response.status, body: await response.json(), response };
  };
}

/** The bearer token of a request: from `Authorization`, or a key a client sends in its body (Tavily's `api_key`). */
export function authorizationOf(c: Context<AppEnv>, bodyKey?: unknown): string | undefined {
  const header = c.req.header("authorization");
  if (header && header.trim()) return header;
  // A header value cannot carry characters beyond Latin-1 (Headers throws); no key has any character
  // outside printable ASCII, so such a key is made plainly wrong and meets the gateway's invalid_key.
  if (typeof bodyKey === "string" && bodyKey.trim()) return `Bearer ${bodyKey.trim().replace(/[^\x21-\x7e]/g, "?")}`;
  return undefined;
}
