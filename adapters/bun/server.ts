/** Quarry on Bun: Bun.serve mounting the core app (`bun run start:bun`). */
import sqliteConnector from "db0/connectors/bun-sqlite";
import type { RuntimeParts } from "../shared/bootstrap.ts";
import { announce, prepare, shutdown, StartupError } from "../shared/start.ts";

declare const Bun: {
  serve(opts: { fetch: (req: Request, server: unknown) => Response | Promise<Response>; hostname: string; port: number }): {
    port: number;
    stop(closeActive?: boolean): Promise<void>;
    requestIP(req: Request): { address: string } | null;
  };
};

const runtime: RuntimeParts = {
  sqlite: (opts) => sqliteConnector({ path: opts.path }),
  remoteAddress: (req, server) => (server as ReturnType<typeof Bun.serve>).requestIP(req)?.address,
};

try {
  const p = await prepare(process.env, runtime);
  const server = Bun.serve({ fetch: (req, srv) => p.quarry.app.fetch(req, srv), hostname: p.config.host, port: p.config.port });
  await announce(p, `http://${p.config.host}:${server.port}`, `bun`);
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      // stop() without closeActive waits for in-flight requests.
      shutdown(p, () => server.stop(), sig).then(() => process.exit(0));
    });
  }
} catch (err) {
  if (err instanceof StartupError) process.exit(1);
  throw err;
}
