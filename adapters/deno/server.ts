/**
 * Quarry on Deno: Deno.serve mounting the core app (`deno task start`).
 * Deno.serve offers no header or request timeout, no connection caps and no hook for requests
 * its parser rejects: QUARRY_HEADER_TIMEOUT and the other connection limits apply on Node only
 * (README, "Slow clients"). Run Deno behind a reverse proxy that enforces them.
 */
import sqliteConnector from "db0/connectors/node-sqlite";
import type { RuntimeParts } from "../shared/bootstrap.ts";
import { webSpawner } from "../extract/spawn.ts";
import { cachedStatements } from "../shared/statement-cache.ts";
import { abandon, announce, listenFailure, prepare, shutdown, StartupError } from "../shared/start.ts";
import { loadEnvFile } from "../shared/env-file.ts";

declare const Deno: {
  env: { toObject(): Record<string, string> };
  serve(
    opts: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
    handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
  addSignalListener(sig: string, fn: () => void): void;
  exit(code: number): never;
};

const runtime: RuntimeParts = {
  // node:sqlite statements hold native memory until a GC: reuse them (shared/statement-cache.ts).
  sqlite: (opts) => cachedStatements(sqliteConnector({ path: opts.path, ...(opts.name ? { name: opts.name } : {}) })),
  extractWorkers: async () => webSpawner(),
  remoteAddress: (_req, info) => (info as { remoteAddr?: { hostname: string } } | undefined)?.remoteAddr?.hostname,
};

loadEnvFile();
try {
  const p = await prepare(Deno.env.toObject(), runtime);
  let server: ReturnType<typeof Deno.serve>;
  try {
    server = Deno.serve({ hostname: p.config.host, port: p.config.port, onListen: () => {} }, (req, info) => p.quarry.app.fetch(req, info));
  } catch (err) {
    await abandon(p);
    throw listenFailure(err, p.config.host, p.config.port);
  }
  let stopping = false;
  for (const sig of ["SIGINT", "SIGTERM"]) {
    Deno.addSignalListener(sig, () => {
      if (stopping) return;
      stopping = true;
      // shutdown() stops accepting and resolves once in-flight requests have finished.
      shutdown(p, () => server.shutdown(), sig).then(() => Deno.exit(0));
    });
  }
  // Announced only once a signal can stop us: whoever waits for this line may signal at once.
  await announce(p, `http://${p.config.host}:${server.addr.port}`, "deno");
} catch (err) {
  if (err instanceof StartupError) Deno.exit(1);
  throw err;
}
