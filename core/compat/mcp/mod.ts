/**
 * `POST /mcp` (api.md §8): the Model Context Protocol over Streamable HTTP, with the same Bearer
 * key as the REST API. The key is checked on every MCP request (a bad one is a 401 before any
 * protocol message is read); protocol chatter (initialize, tools/list) counts toward no limit:
 * each tool call counts exactly as its REST call, through the native route. Sessions are not
 * kept (stateless mode), so `GET` (a server-to-client stream) and `DELETE` (ending a session)
 * answer 405, as the transport's specification allows.
 */
import type { Context } from "hono";
import { ApiError } from "../../errors.ts";
import type { AppEnv } from "../../gateway/context.ts";
import { MAX_BODY_BYTES } from "../../gateway/guard.ts";
import type { RouteDef } from "../../gateway/route.ts";
import type { Authenticator } from "../../keys/authenticate.ts";
import type { AccountPlans } from "../../limits/plans.ts";
import type { Dispatch } from "../dispatch.ts";
import type { CompatRoute } from "../http.ts";
import { McpEndpoint } from "./session.ts";
import { toolsFrom } from "./tools.ts";

export const MCP_PATH = "/mcp";

export function mcpRoutes(dispatch: Dispatch, auth: Authenticator, planOf: AccountPlans, routes: RouteDef[], version: string): CompatRoute[] {
  const endpoint = new McpEndpoint(dispatch, toolsFrom(routes), version, MAX_BODY_BYTES);
  const authenticated = (fn: (c: Context<AppEnv>) => Promise<Response>) => async (c: Context<AppEnv>) => {
    c.set("route", MCP_PATH);
    try {
      const { key, account } = await auth.authenticate(c.req.header("authorization"));
      // The key's own plan and use then head every answer, initialize and tools/list included, as the tools' calls do.
      c.set("auth", { key, account, plan: planOf(account.name, account.plan) });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) c.header("WWW-Authenticate", 'Bearer realm="quarry"');
      throw err;
    }
    return fn(c);
  };
  const noSessions = authenticated(async () => {
    throw new ApiError("method_not_allowed", "This MCP server keeps no sessions: send every message with POST /mcp.", { headers: { Allow: "POST" } });
  });
  return [
    { method: "POST", path: MCP_PATH, handler: authenticated((c) => endpoint.handle(c)) },
    { method: "GET", path: MCP_PATH, handler: noSessions },
    { method: "DELETE", path: MCP_PATH, handler: noSessions },
  ];
}
