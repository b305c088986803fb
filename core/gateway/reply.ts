/**
 * A route's text answer before it is a Response (issue #33): `reply` keeps its body, status and
 * headers, and the gateway's outer step (headers.ts) makes the one Response that leaves, with the
 * gateway headers given to its constructor. A Response made here and remade there with those
 * headers was two constructions a request (about a fifth of a read's CPU on Bun went to Response).
 * A reply that leaves through any other path (CORS, a parent's middleware) is made a Response
 * first (`toResponse`), and gets every header set on it as any Response does.
 */
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";

const JSON_TYPE = "application/json";

/**
 * Deno 2 answers a Response of a string body whose only header is its Content-Type from a fast
 * path, and prepares a native response (an op and a finalization registration) for any other at
 * construction; reading `.headers` after drops either. Side by side on Deno.serve (wrk, CPU per
 * request): a body with its type, then four `headers.set`, 16–19 µs; the five headers in the
 * constructor 17–23 µs; Hono's way (a Headers object copied in, then four sets) 21–25 µs. On Bun
 * and on @hono/node-server (whose Response keeps a plain header object until `.headers` is read)
 * the constructor is the cheaper. So on Deno the other headers are set on the made Response.
 */
export const SET_AFTER = typeof (globalThis as { Deno?: unknown }).Deno === "object";

/** A text answer: its body, status and headers (Content-Type first), not yet a Response. */
export class Reply {
  constructor(
    readonly body: string,
    readonly status: number,
    readonly type: string,
    readonly extra: Record<string, string> | undefined,
  ) {}

  /** The Response as it is, with no gateway header (a path other than the gateway's outer step). */
  toResponse(): Response {
    if (SET_AFTER) return this.typed(this.body);
    return new Response(this.body, { status: this.status, headers: this.ownHeaders() });
  }

  /**
   * The Response that leaves, with the gateway headers (headers.ts) and no body for HEAD: one
   * construction, the headers given to it (set after it on Deno, see SET_AFTER).
   */
  final(id: string, limit: string, remaining: string, reset: string, head: boolean): Response {
    const body = head ? null : this.body;
    if (SET_AFTER) {
      const res = this.typed(body);
      const h = res.headers;
      h.set("X-Request-Id", id);
      h.set("X-RateLimit-Limit", limit);
      h.set("X-RateLimit-Remaining", remaining);
      h.set("X-RateLimit-Reset", reset);
      return res;
    }
    const headers = this.ownHeaders();
    headers["X-Request-Id"] = id;
    headers["X-RateLimit-Limit"] = limit;
    headers["X-RateLimit-Remaining"] = remaining;
    headers["X-RateLimit-Reset"] = reset;
    return new Response(body, { status: this.status, headers });
  }

  /** Its own headers as a fresh object: the Content-Type, then its extra ones. */
  private ownHeaders(): Record<string, string> {
    const headers: Record<string, string> = { "Content-Type": this.type };
    if (this.extra) for (const k in this.extra) headers[k] = this.extra[k]!;
    return headers;
  }

  /** Deno's way: constructed with its Content-Type alone, the other headers set after. */
  private typed(body: string | null): Response {
    const res = new Response(body, { status: this.status, headers: { "Content-Type": this.type } });
    if (this.extra) for (const k in this.extra) res.headers.set(k, this.extra[k]!);
    return res;
  }
}

/** What a route's handler answers: a Response, or a Reply the gateway makes one of. */
export type Answer = Response | Reply;

/** A Response for what a handler answered (a Reply made one, with no gateway header yet). */
export function asResponse(a: Answer): Response {
  return a instanceof Reply ? a.toResponse() : a;
}

/** A text answer (JSON by default); the gateway makes its Response when it is final. */
export function reply(_c: Context<AppEnv>, body: string, status = 200, type = JSON_TYPE, extra?: Record<string, string>): Reply {
  return new Reply(body, status, type, extra);
}

/** `reply` of a value as JSON. */
export function replyJson(c: Context<AppEnv>, data: unknown, status = 200, extra?: Record<string, string>): Reply {
  return reply(c, JSON.stringify(data), status, JSON_TYPE, extra);
}
