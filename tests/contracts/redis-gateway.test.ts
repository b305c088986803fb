/**
 * The gateway on PostgreSQL + Redis, in process, two instances on one database and one Redis (#33):
 * what an authenticated read costs in round trips, counted, not timed, and what the admission asked
 * beside the key's confirmation (gateway/speculate.ts) must never change.
 *
 * Budget, GET /v1/usage, 50 at once with the key known: one read of the key store's mark and one
 * Redis command (the admissions, answering the month's use too: no HGETALL), the admission sent
 * before the mark's read is answered (the two round trips overlap instead of following each other).
 *
 * Rules held: a key revoked on the other instance is refused on its next request here, and the
 * admission made beside the mark is taken back (the key's window holds the answered requests
 * only); a plan lowered on the other instance applies to the next request here, counted once; an
 * admission Redis refuses before the mark is answered is a 503, not an unhandled rejection.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQuarry, type Quarry } from "../../core/app.ts";
import { parseConfig, type Config } from "../../core/config.ts";
import { createKey, ensureAccount, revokeKey } from "../../core/keys/service.ts";
import { buildPorts, type Built } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { echoOperation } from "../helpers/test-operation.ts";
import { tempDatabase } from "../helpers/pg.ts";

const REDIS_URL = process.env.QUARRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const MARK = "quarry_keys_version";

/** What went to PostgreSQL (the mark's read, sent and answered) and to Redis, in order. */
const events: string[] = [];
const poolQuery = pg.Pool.prototype.query;
/** Redis refuses the admissions (as when it is down: ioredis fails them at once, before the mark's read is answered). */
let refuseAdmissions = false;
const sendCommand = Redis.prototype.sendCommand;
const evalsha = Redis.prototype.evalsha;
/** The mark's read answered 100 ms late: an admission refused meanwhile is refused before the mark is known. */
let holdMark = false;

let db: { url: string; drop(): Promise<void> };
let dir: string;
let config: Config;
const instances: Array<{ built: Built; quarry: Quarry }> = [];
let redis: Redis;

beforeAll(async () => {
  pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
    const named = (args[0] as { name?: string } | undefined)?.name === MARK;
    if (named) events.push("mark sent");
    let p = (poolQuery as (...a: unknown[]) => unknown).apply(this, args);
    if (named && holdMark && p instanceof Promise) p = p.then((v) => new Promise((r) => setTimeout(() => r(v), 100)));
    if (named && p instanceof Promise) p.then(() => events.push("mark answered"), () => {});
    return p;
  } as typeof poolQuery;
  // The admission asked (ioredis writes it at the end of the loop's turn, with the turn's other commands).
  Redis.prototype.evalsha = function (this: Redis, ...args: unknown[]) {
    events.push("admission asked");
    return (evalsha as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof evalsha;
  Redis.prototype.sendCommand = function (this: Redis, cmd: { name: string; reject: (e: Error) => void; promise: Promise<unknown> }, ...rest: unknown[]) {
    events.push(cmd.name);
    if (refuseAdmissions && cmd.name === "evalsha") {
      cmd.reject(new Error("Connection is closed."));
      return cmd.promise;
    }
    return (sendCommand as (...a: unknown[]) => unknown).call(this, cmd, ...rest);
  } as typeof sendCommand;
  db = await tempDatabase("rgateway");
  dir = mkdtempSync(join(tmpdir(), "quarry-rgateway-"));
  config = parseConfig({
    QUARRY_DATA_DIR: dir, QUARRY_IP_RATE: "off", QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
    QUARRY_DATABASE_URL: db.url, QUARRY_REDIS_URL: REDIS_URL,
    QUARRY_PLANS: '{"enterprise":{"per_minute":1000000000},"free":{"per_minute":2}}',
  }, "test");
  for (let i = 0; i < 2; i++) {
    const built = await buildPorts(config, nodeRuntime, new MemoryLogger());
    instances.push({ built, quarry: createQuarry(built.ports, config, { operations: () => echoOperation() }) });
  }
  redis = new Redis(REDIS_URL);
});

afterAll(async () => {
  pg.Pool.prototype.query = poolQuery;
  Redis.prototype.sendCommand = sendCommand;
  Redis.prototype.evalsha = evalsha;
  const own = (await redis?.keys("quarry:{key_*"))?.filter((k) => ids.some((id) => k.includes(id))) ?? [];
  if (own.length) await redis.del(...own);
  redis?.disconnect();
  for (const { quarry, built } of instances) {
    await quarry.stop();
    await quarry.drain();
    await built.close();
  }
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const ids: string[] = [];
async function newKey(account: string, plan: string): Promise<{ id: string; secret: string }> {
  const keys = instances[1]!.built.ports.keys;
  await ensureAccount(keys, account, plan, config.plans, Date.now());
  const k = await createKey(keys, { account, name: "t", scopes: ["search", "keys", "scrape"] }, Date.now());
  ids.push(k.id);
  return { id: k.id, secret: k.key };
}

const usage = (i: number, secret: string) =>
  instances[i]!.quarry.app.fetch(new Request("http://127.0.0.1/v1/usage", { headers: { authorization: `Bearer ${secret}` } }));
const windowOf = (id: string) => redis.zcard(`quarry:{${id}}:w`);

describe("the gateway on PostgreSQL + Redis", () => {
  it("GET /v1/usage, 50 at once: one mark read and one Redis command for all, the admission sent before the mark is answered", async () => {
    const { secret } = await newKey("budget", "enterprise");
    for (let i = 0; i < 2; i++) expect((await usage(0, secret)).status).toBe(200); // key known, month seeded
    await new Promise((r) => setTimeout(r, 100));
    events.length = 0;
    const answers = await Promise.all(Array.from({ length: 50 }, () => usage(0, secret)));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(bodies.every((b) => b.used === 0 && b.plan === "enterprise")).toBe(true);
    expect(events.filter((e) => e !== "ping" && e !== "evalsha")).toEqual(["admission asked", "mark sent", "mark answered"]);
    expect(events.filter((e) => e === "evalsha" || e === "hgetall")).toEqual(["evalsha"]);
  });

  it("a key revoked on the other instance is refused on its next request here, and the admission made beside it is taken back", async () => {
    const { id, secret } = await newKey("revoked", "enterprise");
    for (let i = 0; i < 3; i++) expect((await usage(0, secret)).status).toBe(200);
    expect(await windowOf(id)).toBe(3);
    await revokeKey(instances[1]!.built.ports.keys, null, id, Date.now());
    const refused = await usage(0, secret);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.code).toBe("invalid_key");
    expect(await windowOf(id)).toBe(3);
  });

  it("an admission Redis refuses while the mark is read is a 503, nothing counted, and the process goes on", async () => {
    const { id, secret } = await newKey("refused", "enterprise");
    for (let i = 0; i < 2; i++) expect((await usage(0, secret)).status).toBe(200);
    refuseAdmissions = holdMark = true;
    let down: Response;
    try {
      down = await usage(0, secret);
    } finally {
      refuseAdmissions = holdMark = false;
    }
    expect(down.status).toBe(503);
    expect((await down.json()).error.code).toBe("service_unavailable");
    await new Promise((r) => setTimeout(r, 50)); // an unhandled rejection would surface here and fail the file
    expect((await usage(0, secret)).status).toBe(200);
    expect(await windowOf(id)).toBe(3);
  });

  it("a plan lowered on the other instance applies to the next request here, which counts once", async () => {
    const { id, secret } = await newKey("lowered", "enterprise");
    for (let i = 0; i < 3; i++) expect((await usage(0, secret)).status).toBe(200);
    await ensureAccount(instances[1]!.built.ports.keys, "lowered", "free", config.plans, Date.now());
    const refused = await usage(0, secret);
    expect(refused.status).toBe(429);
    expect(await windowOf(id)).toBe(3);
    // Raised again: admitted under it, one entry more.
    await ensureAccount(instances[1]!.built.ports.keys, "lowered", "enterprise", config.plans, Date.now());
    expect((await usage(0, secret)).status).toBe(200);
    expect(await windowOf(id)).toBe(4);
  });
});
