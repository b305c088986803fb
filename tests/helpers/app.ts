/** In-process Quarry for route tests: real storage (memory or SQLite in a temp dir), a controllable clock. */
import { rmSync } from "node:fs";
import { createQuarry, type AppOptions, type Quarry } from "../../core/app.ts";
import { parseConfig, type Env } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import type { ExtractPort, FetchPort, Logger, Metrics, PagePort, Ports, ProxiesPort, RenderPort } from "../../core/ports.ts";
import { FakeClock } from "./clock.ts";

export { FakeClock };
import { buildPorts, memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { tempDir } from "./temp.ts";

/** Collects log lines so tests can assert nothing secret was logged. */
export class MemoryLogger implements Logger {
  lines: Array<Record<string, unknown>> = [];
  private push(level: string, obj: object, msg?: string) {
    this.lines.push({ level, ...obj, msg });
  }
  debug(o: object, m?: string) { this.push("debug", o, m); }
  info(o: object, m?: string) { this.push("info", o, m); }
  warn(o: object, m?: string) { this.push("warn", o, m); }
  error(o: object, m?: string) { this.push("error", o, m); }
  text() {
    return this.lines.map((l) => JSON.stringify(l)).join("\n");
  }
}

export type StorageKind = "memory" | "sqlite";

export interface TestApp {
  request(path: string, init?: RequestInit & { key?: string; json?: unknown; ip?: string }): Promise<Response>;
  ports: Ports;
  clock: FakeClock;
  logger: MemoryLogger;
  /** Creates (or updates) an account on `plan` and a key with `scopes`; returns the secret and id. */
  key(account: string, scopes: string[], plan?: string): Promise<{ secret: string; id: string }>;
  drain(): Promise<void>;
  close(): Promise<void>;
  /** The app's monitor scheduler (tick() runs one round). */
  monitors: Quarry["monitors"];
}

export async function makeApp(opts: { storage?: StorageKind; /** SQLite: this data directory (kept at close), e.g. to restart on the same file. */ dataDir?: string; env?: Env; clock?: FakeClock; options?: AppOptions; pages?: PagePort; fetch?: FetchPort; metrics?: Metrics; render?: RenderPort; extract?: ExtractPort; proxies?: ProxiesPort } = {}): Promise<TestApp> {
  const clock = opts.clock ?? new FakeClock();
  const logger = new MemoryLogger();
  const config = parseConfig({ QUARRY_IP_RATE: "off", ...opts.env }, "test");
  let ports: Ports;
  let closeStorage = async () => {};
  if ((opts.storage ?? "memory") === "memory") {
    ports = memoryPorts(logger, clock, undefined, nodeRuntime.sqlite);
  } else {
    const dir = opts.dataDir ?? tempDir("quarry-test-");
    const built = await buildPorts({ ...config, dataDir: dir }, nodeRuntime, logger, clock);
    ports = built.ports;
    closeStorage = async () => {
      await built.close();
      if (!opts.dataDir) rmSync(dir, { recursive: true, force: true });
    };
  }
  ports = { ...ports, ...(opts.pages ? { pages: opts.pages } : {}), ...(opts.fetch ? { fetch: opts.fetch } : {}), ...(opts.metrics ? { metrics: opts.metrics } : {}), ...(opts.render ? { render: opts.render } : {}), ...(opts.extract ? { extract: opts.extract } : {}), ...(opts.proxies ? { proxies: opts.proxies } : {}), remoteAddress: (req) => req.headers.get("x-test-ip") ?? "127.0.0.1" };
  const quarry = createQuarry(ports, config, opts.options);
  return {
    ports,
    clock,
    logger,
    monitors: quarry.monitors,
    async request(path, init = {}) {
      const { key, json, ip, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key) headers.set("authorization", `Bearer ${key}`);
      if (ip) headers.set("x-test-ip", ip);
      let body = rest.body;
      if (json !== undefined) {
        body = JSON.stringify(json);
        if (!headers.has("content-type")) headers.set("content-type", "application/json");
      }
      return quarry.app.request(path, { ...rest, headers, body });
    },
    async key(account, scopes, plan) {
      await ensureAccount(ports.keys, account, plan, config.plans, clock.now());
      const k = await createKey(ports.keys, { account, name: `${account}-key`, scopes }, clock.now());
      return { secret: k.key, id: k.id };
    },
    drain: () => quarry.drain(),
    async close() {
      await quarry.stop();
      await quarry.drain();
      await closeStorage();
    },
  };
}

export const ALL_SCOPES = ["search", "research", "scrape", "keys"];

/** Any JSON body, as route tests read answers. */
export type Json = Record<string, any>;

/**
 * POST and GET on a test app with a key, answering status and parsed JSON body. The app and the key are
 * read when a call is made (thunks), so a file may assign them in its beforeAll.
 */
export function jsonCalls(app: () => TestApp, defaultKey: () => string) {
  const answer = async (res: Response) => ({ status: res.status, body: (await res.json()) as Json });
  return {
    post: async (path: string, json: unknown, k = defaultKey()) => answer(await app().request(path, { method: "POST", key: k, json })),
    get: async (path: string, k = defaultKey()) => answer(await app().request(path, { key: k })),
  };
}
