/** GET/POST /v1/keys and DELETE /v1/keys/{key_id} (spec: Endpoints; api.md §2). */
import * as v from "valibot";
import { ApiError } from "../errors.ts";
import type { AppDeps } from "../gateway/context.ts";
import { escalatedScopes, SCOPES } from "../keys/scopes.ts";
import { createKey, listKeysJson, revokeKey } from "../keys/service.ts";
import { KeyLists } from "../keys/list-cache.ts";
import { IsoTimestamp, KeyRecordSchema } from "./schemas.ts";
import type { RouteDef } from "../gateway/route.ts";
import { reply } from "../gateway/headers.ts";

/** A key's label, as POST /v1/keys and `quarry keys create --name` take it. */
export const KeyName = v.pipe(
  v.string("name must be a string"),
  v.trim(),
  v.minLength(1, "name must not be empty"),
  v.check((s) => [...s].length <= 100, "name must be at most 100 characters"),
  // A label is shown in lists, logs and the dashboard: no NUL, line breaks or other controls.
  v.regex(/^[^\p{Cc}\p{Cs}\u2028\u2029]*$/u, "name must not contain control characters"),
);

export const CreateKeyBody = v.strictObject({
  name: KeyName,
  scopes: v.pipe(
    v.array(v.picklist(SCOPES, `each scope must be one of ${SCOPES.join(", ")}`), "scopes must be an array"),
    v.minLength(1, "scopes must not be empty"),
  ),
});

export function keyRoutes({ ports }: AppDeps): RouteDef[] {
  const { keys: store, clock } = ports;
  const lists = new KeyLists(store);
  return [
    {
      method: "GET",
      path: "/v1/keys",
      operationId: "listKeys",
      summary: "List the active keys of the caller's account that it may manage (scopes within its own), newest first",
      auth: true,
      scope: "keys",
      group: null,
      status: 200,
      response: v.object({ keys: v.array(KeyRecordSchema) }),
      errors: [],
      handler: async (c) => {
        // Only keys the caller could also create or revoke (scopes ⊆ its own), see keys/scopes.ts.
        const auth = c.get("auth")!;
        return reply(c, await listKeysJson(store, auth.account.name, auth.key.scopes, lists.records(auth.account.name, auth.mark)));
      },
    },
    {
      method: "POST",
      path: "/v1/keys",
      operationId: "createKey",
      example: { name: "ci bot", scopes: ["search"] },
      summary: "Create a key; the response is the only time its secret is shown",
      auth: true,
      scope: "keys",
      group: null,
      body: CreateKeyBody,
      status: 201,
      response: v.object({ ...KeyRecordSchema.entries, key: v.pipe(v.string(), v.regex(/^qry_[0-9a-f]{64}$/)) }),
      errors: [],
      handler: async (c) => {
        const body = c.get("body") as v.InferOutput<typeof CreateKeyBody>;
        const auth = c.get("auth")!;
        const escalated = escalatedScopes(body.scopes, auth.key.scopes);
        if (escalated.length) {
          throw new ApiError("insufficient_scope", `A key cannot grant scopes it lacks: ${escalated.join(", ")}.`);
        }
        const created = await createKey(store, { account: auth.account.name, name: body.name, scopes: body.scopes }, clock.now());
        c.header("Cache-Control", "no-store");
        return c.json(created, 201);
      },
    },
    {
      method: "DELETE",
      path: "/v1/keys/:key_id",
      operationId: "revokeKey",
      summary: "Revoke a key of the caller's account whose scopes are all among the caller's own",
      auth: true,
      scope: "keys",
      group: null,
      params: { key_id: "Key identifier, key_<id>" },
      status: 200,
      response: v.object({ id: v.string(), revoked: v.literal(true), revoked_at: IsoTimestamp }),
      errors: ["not_found"],
      handler: async (c) => {
        const auth = c.get("auth")!;
        return c.json(await revokeKey(store, auth.account.name, c.req.param("key_id") ?? "", clock.now(), auth.key.scopes));
      },
    },
  ];
}
