/**
 * Quarry on Bun: Bun.serve mounting the core app (`npm run start:bun`).
 * Bun.serve has one configurable connection timer, `idleTimeout` (at most 255 s), set from
 * QUARRY_KEEP_ALIVE_TIMEOUT; it closes connections with unfinished headers by itself after
 * about 10 s (measured 12 s), has no connection caps and no hook for requests its parser
 * rejects (README, "Slow clients"). Run Bun behind a reverse proxy that enforces them.
 */
import sqliteConnector from "db0/connectors/bun-sqlite";
import type { RuntimeParts } from "../shared/bootstrap.ts";
import { webSpawner } from "../extract/spawn.ts";
import { cachedStatements } from "../shared/statement-cache.ts";
import { abandon, announce, listenFailure, prepare, shutdown, StartupError } from "../shared/start.ts";

declare const Bun: {
  serve(opts: { fetch: (req: Request, server: unknown) => Response | Promise<Response>; hostname: string; port: number; idleTimeout?: number }): {
    port: number;
    stop(closeActive?: boolean): Promise<void>;
    requestIP(req: Request): { address: string } | null;
  };
};

const runtime: RuntimeParts = {
  // Prepared once per SQL text (shared/statement-cache.ts): db0 prepares a statement per query.
  sqlite: (opts) => cachedStatements(sqliteConnector({ path: opts.path, ...(opts.name ? { name: opts.name } : {}) })),
  extractWorkers: async () => webSpawner(),
  remoteAddress: (req, server) => (server as ReturnType<typeof Bun.serve>).requestIP(req)?.address,
};

try {
  const p = await prepare(process.env, runtime);
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      fetch: (req, srv) => p.quarry.app.fetch(req, srv),
      hostname: p.config.host,
      port: p.config.port,
      // Bun's timer also runs while a handler works, so it must outlast a long research request;
      // its default (10 s) would cut those off.
      idleTimeout: Math.min(255, Math.ceil(p.limits.keepAliveTimeoutMs / 1000)),
    });
  } catch (err) {
    await abandon(p);
    throw listenFailure(err, p.config.host, p.config.port);
  }
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      // stop() without closeActive waits for in-flight requests.
      shutdown(p, () => server.stop(), sig).then(() => process.exit(0));
    });
  }
  // Announced only once a signal can stop us: whoever waits for this line may signal at once.
  await announce(p, `http://${p.config.host}:${server.port}`, "bun");
} catch (err) {
  if (err instanceof StartupError) process.exit(1);
  throw err;
}
