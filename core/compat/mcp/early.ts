/**
 * JSON-RPC messages `POST /mcp` answers itself, before the SDK's transport sees them, because
 * the SDK would answer them wrongly:
 * - an empty batch `[]` is an Invalid Request (-32600), answered with one error (JSON-RPC 2.0);
 *   the SDK would take it for a batch of notifications (202);
 * - a `tools/call` whose `params.name` is not a string, or whose `params.arguments` is not an
 *   object, has invalid params (-32602); the SDK's schema check throws before its handler runs
 *   and is answered as an Internal error (-32603) whose message is the schema library's dump.
 */
import { readAllCapped } from "../../net/read-capped.ts";

type Id = string | number | null;

function rpcError(id: Id, code: number, message: string, status: number): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What is wrong with a tools/call's params, or null when the SDK can take them. */
export function toolCallProblem(params: unknown): string | null {
  if (!isObject(params)) return "tools/call needs params: {name, arguments}.";
  if (typeof params.name !== "string") return "tools/call needs params.name, the tool's name as a string (see tools/list).";
  if (params.arguments !== undefined && !isObject(params.arguments)) return "tools/call params.arguments must be an object of the tool's arguments.";
  return null;
}

/** The answer for a body the SDK would answer wrongly, or null to let the transport answer it. */
export async function earlyAnswer(req: Request, maxBytes: number): Promise<Response | null> {
  if (!req.body || Number(req.headers.get("content-length") ?? 0) > maxBytes) return null;
  let data: unknown;
  try {
    const raw = await readAllCapped(req.clone().body!, maxBytes, () => new Error("too large"));
    data = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    return null; // not JSON, or too large: the transport's own answer
  }
  if (Array.isArray(data) && data.length === 0) return rpcError(null, -32600, "Invalid Request: an empty batch holds no message.", 400);
  if (!isObject(data) || data.jsonrpc !== "2.0" || data.method !== "tools/call") return null;
  // The transport's refusals of the request itself (406, 415) come before any message's answer.
  const accept = req.headers.get("accept") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(req.headers.get("content-type") ?? "") || !accept.includes("application/json") || !accept.includes("text/event-stream")) return null;
  const id = data.id;
  // A notification is never answered; an id of another type is the transport's to refuse.
  if (typeof id !== "string" && typeof id !== "number") return null;
  const problem = toolCallProblem(data.params);
  return problem ? rpcError(id, -32602, `Invalid params: ${problem}`, 200) : null;
}
