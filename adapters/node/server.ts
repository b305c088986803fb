/** Quarry on Node: @hono/node-server mounting the core app. */
import { serve, type HttpBindings } from "@hono/node-server";
import sqliteConnector from "db0/connectors/better-sqlite3";
import type { Env } from "../../core/config.ts";
import type { RuntimeParts } from "../shared/bootstrap.ts";
import { announce, packageVersion, prepare, shutdown } from "../shared/start.ts";
import { createSafeFetch, parseAllowList, proxyFromEnv, quarryUserAgent } from "../fetch/mod.ts";

export const nodeRuntime: RuntimeParts = {
  sqlite: (opts) => sqliteConnector(opts),
  remoteAddress: (_req, env) => (env as HttpBindings | undefined)?.incoming?.socket?.remoteAddress,
  // Node checks the resolved address at connect time, on every redirect.
  pages: (config) =>
    createSafeFetch({ allow: parseAllowList(config.egressAllow), userAgent: quarryUserAgent(packageVersion()), proxy: proxyFromEnv(process.env) }),
};

export async function startNodeServer(env: Env = process.env): Promise<{ url: string; stop: () => Promise<void> }> {
  const p = await prepare(env, nodeRuntime);
  const server = serve({ fetch: p.quarry.app.fetch, hostname: p.config.host, port: p.config.port });
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
