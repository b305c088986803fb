/**
 * A metered operation mounted through the public extension point (`AppOptions.operations`),
 * so the gateway's metering can be tested before the real operations exist. It fails with
 * a 5xx on request, to test refunds.
 */
import * as v from "valibot";
import type { RouteDef } from "../../core/gateway/route.ts";

export const echoOperation = (): RouteDef[] => [
  {
    method: "POST",
    path: "/v1/test/echo",
    summary: "test-only metered echo",
    auth: true,
    scope: "search",
    group: "search",
    body: v.strictObject({ query: v.pipe(v.string(), v.minLength(1)), fail: v.optional(v.boolean()) }),
    status: 200,
    response: v.object({ query: v.string() }),
    errors: [],
    handler: (c) => {
      const body = c.get("body") as { query: string; fail?: boolean };
      if (body.fail) throw new Error("boom (test)");
      return c.json({ query: body.query });
    },
  },
];
