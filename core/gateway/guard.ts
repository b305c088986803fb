/**
 * Per-route gateway steps, in order (gateway/pipeline.ts runs them as one): authenticate and
 * check scope (`authorize`), validate the JSON body (`jsonBody`), then admit atomically against the per-minute window and the
 * monthly quota (`admit`). A metered admission reserves its unit; the unit is committed when
 * the answer is ready (before it leaves) and released on a 5xx, so only answered requests
 * count. Refused requests count toward nothing.
 */
import type { Context } from "hono";
import type * as v from "valibot";
import { ApiError } from "../errors.ts";
import type { Authenticator } from "../keys/authenticate.ts";
import type { AccountPlans, Plan } from "../limits/plans.ts";
import { dayOf, periodOf, periodResetAt, WINDOW_MS } from "../limits/period.ts";
import { retryAfterSeconds } from "../limits/sliding-window.ts";
import type { AdmitRequest, AdmitResult, Clock, Counters, Logger } from "../ports.ts";
import type { AppEnv } from "./context.ts";
import { validOrThrow } from "./validate.ts";
import { documentedPath } from "./route.ts";
import type { Answer } from "./reply.ts";
import { readAllCapped } from "../net/read-capped.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/** Authenticates the request and checks the route's scope; the key, account and plan are in `c.var.auth`. */
export async function authorize(c: Context<AppEnv>, auth: Authenticator, planOf: AccountPlans, scope: string | null, path: string): Promise<void> {
  const { key, account, mark } = await auth.authenticate(c.req.header("authorization"));
  const plan = planOf(account.name, account.plan);
  c.set("auth", { key, account, plan, mark });
  if (scope && !key.scopes.includes(scope)) {
    throw new ApiError("insufficient_scope", `This key lacks the "${scope}" scope required by ${c.req.method} ${documentedPath(path)}.`);
  }
}

/** Reads, size-checks (`maxBytes`, the route's own cap or 64 KiB), parses and validates a JSON body; the result is in `c.var.body`. */
export async function jsonBody<S extends v.GenericSchema>(c: Context<AppEnv>, schema: S, maxBytes = MAX_BODY_BYTES): Promise<void> {
  const length = c.req.header("content-length");
  const declared = Number(length ?? "0");
  if (declared > maxBytes) throw tooLarge(maxBytes);
  refuseEncoded(c.req.header("content-encoding"));
  // A body framed by its Content-Length (and no Transfer-Encoding) is that many bytes, under the
  // cap just checked: read whole, which Deno and Bun answer from the bytes they already hold
  // (a stream over them was a fifth of a cached scrape's CPU on Deno). Any other is read through
  // the cap.
  const framed = length !== undefined && /^\d+$/.test(length) && c.req.header("transfer-encoding") === undefined;
  let raw: string;
  if (framed) raw = await c.req.raw.text();
  else {
    const stream = c.req.raw.body;
    raw = stream ? await readCapped(stream, maxBytes) : "";
  }
  const type = c.req.header("content-type");
  if (raw.trim() === "") throw new ApiError("invalid_request", "A JSON request body is required.");
  if (!type || !/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError("unsupported_media_type", "Send the body as JSON with 'Content-Type: application/json'.");
  }
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    throw new ApiError("invalid_request", "The request body is not valid JSON.");
  }
  c.set("body", validOrThrow(schema, objectBody(data)));
}

/** A compressed body would be read as garbled JSON: say what is wrong instead. */
export function refuseEncoded(encoding: string | undefined): void {
  if (encoding && encoding.trim().toLowerCase() !== "identity") {
    throw new ApiError("unsupported_media_type", `Request bodies are read as sent: send it without Content-Encoding (got "${encoding.slice(0, 40)}").`);
  }
}

/** Every body is a JSON object; null, an array or a bare value gets one plain message, not valibot's. */
export function objectBody(data: unknown): object {
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw new ApiError("invalid_request", "The request body must be a JSON object.");
  return data;
}

const utf8 = new TextDecoder();

export async function readCapped(stream: ReadableStream<Uint8Array>, maxBytes = MAX_BODY_BYTES): Promise<string> {
  return utf8.decode(await readAllCapped(stream, maxBytes, () => tooLarge(maxBytes)));
}

export function tooLarge(maxBytes = MAX_BODY_BYTES): ApiError {
  const size = maxBytes >= 1_000_000 && maxBytes % 1_000_000 === 0 ? `${maxBytes / 1_000_000} MB` : `${maxBytes / 1024} KiB`;
  return new ApiError("payload_too_large", `The request body is larger than ${size}.`);
}

/** The admission a request of `keyId` on `plan` asks for at `now`. */
export function admitRequest(keyId: string, plan: Plan, now: number, group: string | null, withUsage: boolean, withdrawable = false): AdmitRequest {
  const req: AdmitRequest = { keyId, now, perMinute: plan.perMinute, windowMs: WINDOW_MS, period: periodOf(now), group, quota: plan.quota };
  if (withUsage) req.withUsage = true;
  if (withdrawable) req.withdrawable = true;
  return req;
}

export interface LastUsedTracker {
  touch(keyId: string, now: number): void;
}

/**
 * Admits the request, then runs `answer` (whose result is the route's answer, errors included:
 * it is ready when it returns), commits or releases its unit, and hands the answer on.
 */
export async function admit(
  c: Context<AppEnv>,
  counters: Counters,
  clock: Clock,
  group: string | null,
  lastUsed: LastUsedTracker,
  logger: Logger,
  answer: () => Promise<Answer>,
  withUsage = false,
  /** An admission already asked for (gateway/speculate.ts), made of `admitRequest` with this key's confirmed plan. */
  early?: { req: AdmitRequest; result: Promise<AdmitResult> },
): Promise<Answer> {
  const auth = c.get("auth");
  if (!auth) throw new Error("admit() needs authorize() before it");
  const now = early ? early.req.now : clock.now();
  const period = periodOf(now);
  const { plan, key } = auth;
  const result = await (early ? early.result : counters.admit(admitRequest(key.id, plan, now, group, withUsage)));
  const limits = { quota: plan.quota, used: result.used, resetAt: periodResetAt(now) };
  c.set("limits", limits);
  if (!result.ok) {
    if (result.reason === "rate_limited") {
      const retryAfter = retryAfterSeconds(result.retryAfterMs);
      throw new ApiError("rate_limited", `Rate limit exceeded: this plan allows ${plan.perMinute} requests per minute.`, {
        retryAfter,
        headers: { "Retry-After": String(retryAfter) },
      });
    }
    throw new ApiError("quota_exceeded", `Monthly quota of ${plan.quota} requests exhausted; it resets at ${limits.resetAt}. Upgrade the plan for more.`);
  }
  lastUsed.touch(key.id, now);
  if (result.usage) c.set("usage", { period, count: result.usage });
  const ticket = result.ticket;
  // A client that closed its connection before its answer was ready is owed nothing, and is
  // charged nothing. Only a reservation asks: reading `signal` makes @hono/node-server build a
  // whole Request and AbortSignal for a request it had kept lightweight (a tenth of an unmetered
  // read's CPU). A metered request has built them already, to read its body, before the
  // answer: the signal follows the connection from then on.
  const signal = ticket ? c.req.raw.signal : null;
  // The answer's status (`c.res` if `answer` threw).
  let out: Answer | undefined;
  const uncounted = () => (out ?? c.res).status >= 500 || c.get("refused") === true || signal?.aborted === true;
  let committed = false;
  let refunded = false;
  // For answers whose status left before the work failed (streams): the committed unit back, once.
  // Only a metered request has a unit to give back (no closure made for the others).
  if (group !== null) c.set("refund", async () => {
    if (!committed || refunded) return;
    refunded = true;
    try {
      await counters.refund(key.id, period, group, dayOf(now));
      limits.used = Math.max(0, limits.used - 1);
    } catch (err) {
      logger.warn({ req_id: c.get("requestId"), err: String(err) }, "could not refund a failed stream");
    }
  });
  try {
    out = await answer();
  } finally {
    // The answer is ready: a 5xx, a refusal or a client gone drops the reservation, anything else counts it, before it leaves.
    if (ticket && uncounted()) {
      if (signal?.aborted) c.set("clientGone", true);
      await counters.release(ticket).catch(() => {});
    }
  }
  if (ticket && !uncounted()) {
    limits.used = await counters.commit(ticket);
    committed = true;
  }
  return out;
}
