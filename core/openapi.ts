/**
 * The OpenAPI 3.1 document, generated from the route definitions and their valibot schemas.
 * Written for client generators: every operation has an `operationId`, shared schemas live in
 * `components` (and are referenced), counts are integers, and the headers every answer carries
 * (request id, rate limits, Retry-After) are declared on the responses.
 */
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { ERROR_STATUS, type ErrorCode } from "./errors.ts";
import { BODY_ERRORS, documentedPath, GATEWAY_ERRORS, type RouteDef } from "./gateway/route.ts";
import { MAX_BODY_BYTES } from "./gateway/guard.ts";
import { BackendStatus } from "./schema/fields.ts";
import { ErrorObject, KeyRecordSchema } from "./routes/schemas.ts";

/** Schemas several operations share: each appears once, under components.schemas. */
const SHARED = { Error: ErrorObject, KeyRecord: KeyRecordSchema, BackendStatus };

const CONVERSION: ConversionConfig = {
  // Transformations (trim) and custom checks have no JSON Schema form.
  errorMode: "ignore",
  definitions: SHARED,
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
};

function schemaOf(schema: v.GenericSchema): Record<string, unknown> {
  const { $schema: _s, $defs: _d, ...rest } = toJsonSchema(schema, CONVERSION) as Record<string, unknown>;
  return rest;
}

const ref = (kind: "headers" | "schemas", name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Every answer carries these (api.md §3), errors and /health included. */
const ALWAYS = ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

const HEADERS = {
  "X-Request-Id": { description: "req_ + 26 ULID characters; quote it when reporting a problem", schema: { type: "string", pattern: "^req_[0-9A-HJKMNP-TV-Z]{26}$" } },
  "X-RateLimit-Limit": { description: "The key's monthly quota, or `unlimited`", schema: { type: "string" } },
  "X-RateLimit-Remaining": { description: "Requests left this month, or `unlimited`", schema: { type: "string" } },
  "X-RateLimit-Reset": { description: "When the quota resets: the first instant of next month, ISO 8601 UTC", schema: { type: "string", format: "date-time" } },
  "Retry-After": { description: "Whole seconds until a request would be admitted", schema: { type: "integer", minimum: 1 } },
};

function headersFor(status: number): Record<string, unknown> {
  const names = status === 429 ? [...ALWAYS, "Retry-After"] : ALWAYS;
  return Object.fromEntries(names.map((n) => [n, ref("headers", n)]));
}

function errorsOf(route: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  if (route.auth) for (const c of GATEWAY_ERRORS) codes.add(c);
  if (route.body) for (const c of BODY_ERRORS) codes.add(c);
  // Every native route refuses a query parameter it does not take (gateway/query.ts).
  if (route.path.startsWith("/v1/")) codes.add("invalid_request");
  if (route.group) codes.add("quota_exceeded");
  codes.add("rate_limited"); // the per-IP limit applies to every route
  return [...codes];
}

/** `POST /v1/keys/:key_id` → `postV1KeysKeyId`, for routes that name no operationId. */
function derivedOperationId(r: RouteDef): string {
  const words = [r.method.toLowerCase(), ...r.path.split(/[^A-Za-z0-9]+/).filter(Boolean)];
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join("");
}

function operationOf(r: RouteDef): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    [String(r.status)]: {
      description: "Success",
      headers: headersFor(r.status),
      content: {
        "application/json": { schema: schemaOf(r.response) },
        ...Object.fromEntries((r.alsoProduces ?? []).map((t) => [t, { schema: { type: "string" } }])),
      },
    },
  };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorsOf(r)) {
    const s = ERROR_STATUS[code];
    byStatus.set(s, [...(byStatus.get(s) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = {
      description: `Error: ${codes.join(", ")}`,
      headers: headersFor(status),
      content: { "application/json": { schema: ref("schemas", "Error") } },
    };
  }
  if (r.path === "/health") {
    responses["503"] = { description: "Unavailable: storage (the database, Redis or the disk) cannot be used", headers: headersFor(503), content: { "application/json": { schema: schemaOf(r.response) } } };
  }
  return {
    operationId: r.operationId ?? derivedOperationId(r),
    tags: [r.scope === "keys" ? "Keys" : r.scope ? "Operations" : r.auth ? "Account" : "Service"],
    summary: r.summary,
    ...(r.description ? { description: r.description } : {}),
    ...(r.auth ? { security: [{ bearer: [] }] } : { security: [] }),
    ...(r.scope ? { "x-quarry-scope": r.scope } : {}),
    ...(r.group ? { "x-quarry-usage-group": r.group } : {}),
    ...(r.params || r.query
      ? {
          parameters: [
            ...Object.entries(r.params ?? {}).map(([name, description]) => ({ name, in: "path", required: true, description, schema: { type: "string" } })),
            ...Object.entries(r.query ?? {}).map(([name, description]) => ({ name, in: "query", required: false, description, schema: { type: "integer", minimum: 0 } })),
          ],
        }
      : {}),
    ...(r.body ? { requestBody: { required: true, description: `JSON, at most ${(r.maxBodyBytes ?? MAX_BODY_BYTES).toLocaleString("en")} bytes (a larger body is a 413 payload_too_large)`, content: { "application/json": { schema: schemaOf(r.body), ...(r.example ? { example: r.example } : {}) } } } } : {}),
    responses,
  };
}

/** `description`: the reference's opening text (docs/guide.ts); the plain sentence when none is given. */
export function openApiDocument(routes: RouteDef[], version: string, description = "Search and research API for software clients and AI agents.") {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = documentedPath(r.path);
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = operationOf(r);
  }
  const { definitions: _d, overrideRef: _o, ...plain } = CONVERSION;
  const schemas = Object.fromEntries(
    Object.entries(toJsonSchemaDefs(SHARED, { ...plain, overrideRef: CONVERSION.overrideRef })).map(([name, s]) => {
      const { $schema: _s, ...rest } = s as Record<string, unknown>;
      return [name, rest];
    }),
  );
  return {
    openapi: "3.1.0",
    info: { title: "Quarry", version, description },
    // Relative: the API is served from the same origin as this document.
    servers: [{ url: "/", description: "This Quarry server" }],
    tags: [
      { name: "Operations", description: "Search, scrape, video, social and research: metered against the key's monthly quota" },
      { name: "Keys", description: "The account's API keys (scope `keys`)" },
      { name: "Account", description: "The calling key's plan and use" },
      { name: "Service", description: "Health and operations, no API key needed" },
    ],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "qry_ followed by 64 lowercase hex characters" } },
      headers: HEADERS,
      schemas,
    },
    paths,
  };
}
