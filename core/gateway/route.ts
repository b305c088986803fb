/**
 * A route definition: the one place a route's method, path, scope, usage group, schemas
 * and possible errors are stated. The app mounts it with the gateway steps in order, and
 * the OpenAPI document is generated from the same definitions.
 */
import type { Context } from "hono";
import type * as v from "valibot";
import type { ErrorCode } from "../errors.ts";
import type { AppEnv } from "./context.ts";
import type { Answer } from "./reply.ts";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

export interface RouteDef {
  method: Method;
  /** Hono path, e.g. `/v1/keys/:key_id`. */
  path: string;
  /** Stable name for generated clients and MCP tools; derived from method and path when absent. */
  operationId?: string;
  summary: string;
  /** A paragraph for the API reference and MCP tool descriptions: what it does, costs and returns. */
  description?: string;
  /** A request body that works, shown in the reference. */
  example?: Record<string, unknown>;
  /** false for public routes (health, the OpenAPI document). */
  auth: boolean;
  /** Scope required; null = any valid key. */
  scope: string | null;
  /** Usage group of a metered operation; null = not metered. */
  group: string | null;
  /** The handler reads the key's month of use: admission answers it with its decision where the counters can (`withUsage`). */
  readsUsage?: boolean;
  body?: v.GenericSchema;
  /** The body's cap in bytes when it is not the gateway's 64 KiB (a larger one is a 413 `payload_too_large`). */
  maxBodyBytes?: number;
  params?: Record<string, string>;
  /**
   * The query parameters the route takes, with their descriptions: whole numbers from 0 (the
   * only kind the API has, a job's `skip`). On routes under `/v1/` any other is a 400
   * `invalid_request`, as an unknown body field is; absent means none.
   */
  query?: Record<string, string>;
  status: number;
  response: v.GenericSchema;
  /** Content types besides JSON that the route can answer with (e.g. text/event-stream). */
  alsoProduces?: string[];
  /** Route-specific errors; the gateway's own (auth, limits, 5xx) are added automatically. */
  errors: ErrorCode[];
  /** Its answer: a Response, or a `reply` (gateway/reply.ts) whose one Response the gateway makes with its headers. */
  handler: (c: Context<AppEnv>) => Answer | Promise<Answer>;
}

/** A route's path as the API reference writes it: `/v1/keys/:key_id` → `/v1/keys/{key_id}`. */
export function documentedPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, "{$1}");
}

/** Errors every authenticated route can answer with, whatever it does. */
export const GATEWAY_ERRORS: ErrorCode[] = [
  "missing_auth", "invalid_auth", "invalid_key", "insufficient_scope", "rate_limited", "service_unavailable", "internal_error",
];
export const BODY_ERRORS: ErrorCode[] = ["invalid_request", "payload_too_large", "unsupported_media_type"];
