/** Quarry on Node: @hono/node-server mounting the core app. */
import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import sqliteConnector from "db0/connectors/better-sqlite3";
import type { Server } from "node:http";
import type { Env } from "../../core/config.ts";
import type { RuntimeParts } from "../shared/bootstrap.ts";
import { abandon, announce, listenFailure, prepare, shutdown } from "../shared/start.ts";
import { guardConnections } from "./connections.ts";
import { cachedStatements } from "../shared/statement-cache.ts";
import { nodeSpawner } from "../extract/spawn.ts";

/** Heap limit of one extraction worker; a page that needs more is extracted in process. */
const EXTRACT_WORKER_OLD_SPACE_MB = 512;
/**
 * Young generation of one extraction worker. V8's default lets the nursery alone reach about
 * 48 MB; at 16 MB a 2,000-page crawl peaked ~16 MB lower with no measurable CPU cost on real
 * articles (8 MB cost ~15% more CPU there). 32 MB halved the worker's scavenges in a crawl (112 to
 * 68) but, alternating the two against one site, changed neither its pages/s nor its CPU, and
 * added ~18 MB to a crawl's RSS and ~25 MB to the peak of scrape bursts. See bench/RESULTS.md, "Crawl".
 */
const EXTRACT_WORKER_YOUNG_SPACE_MB = 16;

export const nodeRuntime: RuntimeParts = {
  // Prepared once per SQL text (shared/statement-cache.ts): db0 prepares a statement per query.
  sqlite: (opts) => cachedStatements(sqliteConnector(opts)),
  extractWorkers: () => nodeSpawner(EXTRACT_WORKER_OLD_SPACE_MB, EXTRACT_WORKER_YOUNG_SPACE_MB),
  remoteAddress: (_req, env) => (env as HttpBindings | undefined)?.incoming?.socket?.remoteAddress,
};

export async function startNodeServer(env: Env = process.env): Promise<{ url: string; stop: () => Promise<void> }> {
  const p = await prepare(env, nodeRuntime);
  const { limits } = p;
  const server = createAdaptorServer({
    fetch: p.quarry.app.fetch,
    hostname: p.config.host,
    serverOptions: {
      headersTimeout: limits.headerTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks the two timeouts on this period (30 s by default, longer than the timeouts themselves).
      connectionsCheckingInterval: Math.min(1000, limits.headerTimeoutMs),
    },
  }) as Server;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxRequestsPerSocket = limits.keepAliveMaxRequests || null;
  guardConnections(server, limits, p.config, p.logger);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(p.config.port, p.config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await abandon(p);
    throw listenFailure(err, p.config.host, p.config.port);
  }
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : p.config.port;
  const url = `http://${p.config.host.includes(":") ? `[${p.config.host}]` : p.config.host}:${port}`;
  let stopping: Promise<void> | null = null;
  // `why` is logged: the signal that stopped the server, or "stop" when an embedder called stop().
  const stop = (why = "stop") =>
    (stopping ??= shutdown(
      p,
      () =>
        new Promise<void>((resolve) => {
          // Idle keep-alive sockets would hold close() open; busy ones finish their request first,
          // and are closed once idle too (else one answered during the drain held it for all 10 s).
          const sweep = setInterval(() => server.closeIdleConnections(), 50);
          sweep.unref();
          server.close(() => (clearInterval(sweep), resolve()));
          server.closeIdleConnections();
        }),
      why,
    ));
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      stop(sig).then(() => process.exit(0));
    });
  }
  // Announced only once a signal can stop us: whoever waits for this line may signal at once.
  await announce(p, url, `node ${process.version}`);
  return { url, stop };
}
