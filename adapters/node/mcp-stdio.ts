/**
 * `quarry mcp`: the MCP tools over stdio for desktop clients (Claude Desktop, Cursor, …), as a
 * thin proxy of a running Quarry server's `POST /mcp` (QUARRY_URL, default
 * http://127.0.0.1:8080, with QUARRY_KEY). The tool list and every call come from the server, so
 * stdio and HTTP clients see the same tools and the same gateway. Nothing but protocol messages
 * goes to stdout; what goes wrong is said on stderr and in the tool's error.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { INSTRUCTIONS, SERVER_INFO } from "../../core/compat/mcp/session.ts";
import { packageVersion } from "../shared/version.ts";

export const DEFAULT_QUARRY_URL = "http://127.0.0.1:8080";

/** The server's own words for a failed request: `code: message` from its error body when there is one. */
export function describeFailure(err: unknown, base: string): string {
  if (err instanceof StreamableHTTPError) {
    const json = /\{[\s\S]*\}$/.exec(err.message)?.[0];
    try {
      const body = json ? (JSON.parse(json) as { error?: { code?: string; message?: string } }) : null;
      if (body?.error?.code) return `${body.error.code}: ${body.error.message}`;
    } catch {
      // not Quarry's error body: the transport's words below
    }
    return `Quarry at ${base} answered HTTP ${err.code}: ${err.message}`;
  }
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return `Cannot reach Quarry at ${base}: ${err instanceof Error ? err.message : String(err)}${cause}`;
}

export async function startMcpStdio(env: NodeJS.ProcessEnv): Promise<void> {
  const base = (env.QUARRY_URL?.trim() || DEFAULT_QUARRY_URL).replace(/\/+$/, "");
  // Checked before any client connects: otherwise every call fails later, naming no variable.
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new Error(`QUARRY_URL: "${base}" is not an http(s) URL of a Quarry server, such as ${DEFAULT_QUARRY_URL}.`);
  }
  const key = env.QUARRY_KEY?.trim();
  if (!key) throw new Error("QUARRY_KEY is not set: give `quarry mcp` the API key it should call the server with.");
  const version = packageVersion();
  let upstream: Promise<Client> | null = null;
  const connect = () =>
    (upstream ??= (async () => {
      const client = new Client({ name: "quarry-mcp-stdio", version });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      return client;
    })().catch((err: unknown) => {
      upstream = null; // try again on the next request: the server may have started since
      throw err;
    }));

  // Requests still being answered: end of input waits for them, so no answer read is dropped.
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    void work.then(() => inFlight.delete(work), () => inFlight.delete(work));
    return work;
  };
  const server = new Server({ ...SERVER_INFO, version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, (req) => track(listTools(req)));
  server.setRequestHandler(CallToolRequestSchema, (req) => track(callTool(req)));
  const listTools = async (req: { params?: Parameters<Client["listTools"]>[0] }) => {
    try {
      return await (await connect()).listTools(req.params);
    } catch (err) {
      const message = describeFailure(err, base);
      process.stderr.write(`quarry mcp: ${message}\n`);
      throw new McpError(ErrorCode.InternalError, message);
    }
  };
  const callTool = async (req: { params: Parameters<Client["callTool"]>[0] }): Promise<CallToolResult> => {
    try {
      return (await (await connect()).callTool(req.params)) as CallToolResult;
    } catch (err) {
      // A protocol error the server answered (an unknown tool is -32602) stays one, in the server's words.
      const protocol = err instanceof McpError && err.code <= -32600 && err.code >= -32700;
      if (protocol) throw Object.assign(new Error(err.message.replace(`MCP error ${err.code}: `, "")), { code: err.code, data: err.data });
      const message = describeFailure(err, base);
      process.stderr.write(`quarry mcp: ${message}\n`);
      return { isError: true, content: [{ type: "text", text: message }] };
    }
  };
  await server.connect(new StdioServerTransport());
  // The client closed our stdin: nothing more can arrive, but what arrived is answered first.
  process.stdin.once("end", async () => {
    const settled = () => new Promise((resolve) => setImmediate(resolve));
    await settled(); // requests read just before the end reach their handlers
    while (inFlight.size > 0) {
      await Promise.allSettled([...inFlight]);
      await settled(); // their answers are written
    }
    await server.close().finally(() => process.exit(0));
  });
}
