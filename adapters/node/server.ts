/** Quarry on Node: @hono/node-server mounting the core app. */
import { serve, type HttpBindings } from "@hono/node-server";
import sqliteConnector from "db0/connectors/better-sqlite3";
import type { Env } from "../../core/config.ts";
import type { RuntimeParts } from "../shared/bootstrap.ts";
import { announce, prepare, shutdown } from "../shared/start.ts";

export const nodeRuntime: RuntimeParts = {
  sqlite: (opts) => sqliteConnector(opts),
  remoteAddress: (_req, env) => (env as HttpBindings | undefined)?.incoming?.socket?.remoteAddress,
};

export async function startNodeServer(env: Env = process.env): Promise<{ url: string; stop: () => Promise<void> }> {
  const p = await prepare(env, nodeRuntime);
  const server = serve({ fetch: p.quarry.app.fetch, hostname: p.config.host, port: p.config.port });
  // Keep idle connections longer than clients and load balancers do (undici 4 s, typical LBs 60 s),
  // so the client always closes first: otherwise a POST sent on a socket the server is closing
  // fails with "other side closed" and cannot be retried safely.
  const http = server as unknown as { keepAliveTimeout: number; headersTimeout: number };
  http.keepAliveTimeout = 65_000;
  http.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : p.config.port;
  const url = `http://${p.config.host.includes(":") ? `[${p.config.host}]` : p.config.host}:${port}`;
  await announce(p, url, `node ${process.version}`);

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= shutdown(
      p,
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Idle keep-alive sockets would hold close() open; busy ones finish their request first.
          (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        }),
      "stop",
    ));
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      stop().then(() => process.exit(0));
    });
  }
  return { url, stop };
}
