/**
 * Node's defences against slow and odd clients (issue #19): caps on open connections, in
 * total and per client address, checked the moment a connection is accepted (before any
 * byte is parsed, unlike the per-IP request bucket), and the JSON error shape for requests
 * the HTTP parser rejects or that time out.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Config } from "../../core/config.ts";
import { isTrustedProxy } from "../../core/net/trusted-proxies.ts";
import type { Logger } from "../../core/ports.ts";
import { rawErrorResponse, type RawError } from "../shared/raw-response.ts";
import type { ServerLimits } from "../shared/server-limits.ts";

/** Refusals are logged at most this often, so a flood does not flood the log too. */
const REFUSAL_LOG_MS = 10_000;

export function guardConnections(server: Server, limits: ServerLimits, config: Config, logger: Logger): void {
  let open = 0;
  const perAddress = new Map<string, number>();
  let refused = 0;
  let lastLog = 0;

  const refuse = (socket: Socket, err: RawError, address: string) => {
    refused++;
    const now = Date.now();
    if (now - lastLog >= REFUSAL_LOG_MS) {
      logger.warn({ address, open, refused, reason: err.code }, "connections refused: over QUARRY_MAX_CONNECTIONS or QUARRY_MAX_CONNECTIONS_PER_ADDRESS");
      lastLog = now;
      refused = 0;
    }
    // Closed as soon as the answer is handed to the kernel: a refused socket must not hold a file descriptor.
    socket.write(rawErrorResponse(config, err).bytes, () => socket.destroy());
    socket.setTimeout(1000, () => socket.destroy());
  };

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown";
    if (limits.maxConnections && open >= limits.maxConnections) {
      return refuse(socket, { status: 503, code: "service_unavailable", message: `The server has ${open} open connections, its limit; try again shortly.`, retryAfter: 1 }, address);
    }
    const mine = perAddress.get(address) ?? 0;
    // A trusted proxy carries many clients on its connections; it enforces its own limits.
    if (limits.maxConnectionsPerAddress && mine >= limits.maxConnectionsPerAddress && !isTrustedProxy(config.trustProxy, address)) {
      return refuse(socket, { status: 429, code: "rate_limited", message: `Too many open connections from this address (limit ${limits.maxConnectionsPerAddress}).`, retryAfter: 1 }, address);
    }
    open++;
    perAddress.set(address, mine + 1);
    socket.once("close", () => {
      open--;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
  });

  server.on("clientError", (err: NodeJS.ErrnoException & { reason?: string }, socket: Socket) => {
    const answered = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === "ECONNRESET" || !socket.writable || answered) {
      socket.destroy();
      return;
    }
    const e = describeClientError(err, limits);
    const { id, bytes } = rawErrorResponse(config, e);
    logger.info({ req_id: id, status: e.status, error: err.code, reason: err.reason ?? err.message, address: socket.remoteAddress }, "request rejected before routing");
    socket.end(bytes);
    socket.setTimeout(1000, () => socket.destroy());
  });
}

function describeClientError(err: NodeJS.ErrnoException & { reason?: string }, limits: ServerLimits): RawError {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return {
      status: 408,
      code: "timeout",
      message: `The request did not arrive in time: headers are allowed ${limits.headerTimeoutMs / 1000} s and the whole request ${limits.requestTimeoutMs / 1000} s.`,
    };
  }
  if (err.code === "HPE_HEADER_OVERFLOW") {
    return { status: 431, code: "invalid_request", message: "The request headers are larger than the server accepts." };
  }
  const reason = err.reason ?? "malformed request";
  return { status: 400, code: "invalid_request", message: `The request is not valid HTTP/1.1 (${reason}).` };
}
