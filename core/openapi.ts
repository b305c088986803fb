/** The OpenAPI 3.1 document, generated from the route definitions and their valibot schemas. */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { ERROR_STATUS, type ErrorCode } from "./errors.ts";
import { BODY_ERRORS, GATEWAY_ERRORS, type RouteDef } from "./gateway/route.ts";
import { ErrorObject } from "./routes/schemas.ts";

function schemaOf(schema: v.GenericSchema): Record<string, unknown> {
  // errorMode "ignore": transformations (trim) and custom checks have no JSON Schema form.
  const { $schema: _drop, ...rest } = toJsonSchema(schema, { errorMode: "ignore" }) as Record<string, unknown>;
  return rest;
}

function errorsOf(route: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  if (route.auth) for (const c of GATEWAY_ERRORS) codes.add(c);
  if (route.body) for (const c of BODY_ERRORS) codes.add(c);
  if (route.group) codes.add("quota_exceeded");
  codes.add("rate_limited"); // the per-IP limit applies to every route
  return [...codes];
}

export function openApiDocument(routes: RouteDef[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([a-z_]+)/g, "{$1}");
    const responses: Record<string, unknown> = {
      [String(r.status)]: {
        description: "Success",
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
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }
    if (r.path === "/health") {
      responses["503"] = { description: "Unavailable: the database is unreachable", content: { "application/json": { schema: schemaOf(r.response) } } };
    }
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      summary: r.summary,
      ...(r.auth ? { security: [{ bearer: [] }] } : { security: [] }),
      ...(r.scope ? { "x-quarry-scope": r.scope } : {}),
      ...(r.group ? { "x-quarry-usage-group": r.group } : {}),
      ...(r.params
        ? { parameters: Object.entries(r.params).map(([name, description]) => ({ name, in: "path", required: true, description, schema: { type: "string" } })) }
        : {}),
      ...(r.body ? { requestBody: { required: true, content: { "application/json": { schema: schemaOf(r.body) } } } } : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Quarry", version, description: "Search and research API for software clients and AI agents." },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "qry_ followed by 64 lowercase hex characters" } },
      schemas: { Error: schemaOf(ErrorObject) },
    },
    paths,
  };
}
