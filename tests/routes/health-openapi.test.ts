import { createStorage, defineDriver } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import * as v from "valibot";
import { afterEach, describe, expect, it } from "vitest";
import { KvKeyStore } from "../../adapters/storage/kv-key-store.ts";
import { ERROR_STATUS } from "../../core/errors.ts";
import { HealthRecord } from "../../core/routes/health.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { echoOperation } from "../helpers/test-operation.ts";

/**
 * The database edge: an unstorage driver over the memory driver that can be cut off, as a
 * database that stops answering. (PostgreSQL outages are exercised for real in the scale-out suite.)
 */
function switchableDriver() {
  const inner = memoryDriver();
  const state = { down: false };
  const guard = <A extends unknown[], R>(fn: (...a: A) => R) => (...a: A): R => {
    if (state.down) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
    return fn(...a);
  };
  const driver = defineDriver(() => ({
    name: "switchable",
    hasItem: guard((k: string) => inner.hasItem(k, {})),
    getItem: guard((k: string) => inner.getItem(k, {})),
    setItem: guard((k: string, val: string) => inner.setItem!(k, val, {})),
    removeItem: guard((k: string) => inner.removeItem!(k, {})),
    getKeys: guard((b: string) => inner.getKeys(b, {})),
  }))({});
  return { storage: createStorage({ driver }), state };
}

describe("GET /health", () => {
  let t: TestApp;
  afterEach(() => t?.close());

  it("is ok with every service described, without authentication", async () => {
    t = await makeApp({ storage: "sqlite" });
    await t.clock.advance(42_000);
    const res = await t.request("/health");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(v.safeParse(HealthRecord, body).success).toBe(true);
    expect(body).toMatchObject({
      status: "ok",
      version: "test",
      uptime_secs: 42,
      timestamp: "2026-11-22T12:00:42Z",
      services: {
        database: { status: "ok" },
        // Without Redis the counts live in the database, and follow its state.
        limits: { status: "ok", store: "database" },
        cache: { status: "ok", entries: 0, size_mb: 0 },
        metasearch: { status: "disabled" },
        intelligence: { status: "ok", sources_tracked: 0 },
      },
      backends: {},
    });
    expect(Number.isInteger(body.services.database.latency_ms)).toBe(true);
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("1000");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("counts cache entries and tracked sources", async () => {
    t = await makeApp();
    await t.ports.cache.set("a", { big: "x".repeat(2000) }, 60);
    await t.ports.sources.record("example.org", { backend: "wikipedia" });
    await t.ports.sources.record("example.org", { backend: "brave" });
    await t.ports.sources.record("example.com", { fetched: true, ok: true });
    const body = await (await t.request("/health")).json();
    expect(body.services.cache.entries).toBe(1);
    expect(body.services.cache.size_mb).toBeGreaterThan(0);
    expect(body.services.intelligence.sources_tracked).toBe(2);
    expect((await t.ports.sources.get("example.org"))?.backends).toEqual({ wikipedia: 1, brave: 1 });
  });

  it("is degraded (200, no backends key) when a backend fails", async () => {
    t = await makeApp({ options: { health: { backends: () => ({ duckduckgo: { status: "suspended", success_rate: 0.2, calls: 5 }, wikipedia: { status: "ok", success_rate: 1, calls: 3 } }) } } });
    const res = await t.request("/health");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("degraded");
    expect(body).not.toHaveProperty("backends");
    // ...but services.backends always names them, for the dashboard and operators.
    expect(body.services.backends).toEqual({
      status: "degraded",
      failing: ["duckduckgo"],
      detail: { duckduckgo: { status: "suspended", success_rate: 0.2, calls: 5 }, wikipedia: { status: "ok", success_rate: 1, calls: 3 } },
    });
  });

  it("is unavailable (503) while the database is down, other requests get 503 service_unavailable, and both recover by themselves", async () => {
    const { storage, state } = switchableDriver();
    t = await makeApp({ options: { operations: echoOperation } });
    // The mark is read from the database too, as SQLite's data_version is: it fails while the database is down.
    t.ports.keys = new KvKeyStore(storage, () => {
      if (state.down) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
      return 0;
    });
    // a fresh app over the switchable store
    const { createQuarry } = await import("../../core/app.ts");
    const { parseConfig } = await import("../../core/config.ts");
    const { createKey, ensureAccount } = await import("../../core/keys/service.ts");
    const config = parseConfig({ QUARRY_IP_RATE: "off" }, "test");
    const app = createQuarry(t.ports, config, { operations: echoOperation }).app;
    await ensureAccount(t.ports.keys, "acme", undefined, config.plans, t.clock.now());
    const { key } = await createKey(t.ports.keys, { account: "acme", name: "k", scopes: ["search"] }, t.clock.now());
    const call = () => app.request("/v1/test/echo", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: '{"query":"q"}' });

    expect((await call()).status).toBe(200);
    state.down = true;
    const health = await app.request("/health");
    expect(health.status).toBe(503);
    const hb = await health.json();
    expect(hb.status).toBe("unavailable");
    expect(hb.services.database.status).toBe("unreachable");
    expect(hb.services.limits).toMatchObject({ status: "unreachable", store: "database" });
    // Anyone may read /health: it says what kind of failure, never the database's address.
    expect(hb.services.database.error).toBe("the database does not answer");
    expect(JSON.stringify(hb)).not.toContain("5432");
    const refused = await call();
    expect(refused.status).toBe(503);
    const rb = await refused.json();
    expect(rb.error.code).toBe("service_unavailable");
    expect(rb.error.message).not.toContain("ECONNREFUSED");
    // It names storage, not only "the database": Redis or a full disk refuse the same way.
    expect(rb.error.message).toBe("Storage is unavailable (the database, Redis or the disk); try again shortly.");
    // The log keeps the reason with the request id, without a stack trace per refused request.
    const logged = t.logger.lines.find((l) => l.req_id === rb.error.request_id)!;
    expect((logged.err as { message: string }).message).toContain("ECONNREFUSED");
    expect((logged.err as { stack?: string }).stack).toBeUndefined();
    expect(refused.headers.get("x-request-id")).toBe(rb.error.request_id);
    state.down = false;
    expect((await app.request("/health")).status).toBe(200);
    expect((await call()).status).toBe(200);
  });
});

/** A Quarry over a fresh SQLite data directory, as `quarry serve` builds it, with its log kept. */
async function sqliteQuarry() {
  const { createQuarry } = await import("../../core/app.ts");
  const { parseConfig } = await import("../../core/config.ts");
  const { buildPorts } = await import("../../adapters/shared/bootstrap.ts");
  const { nodeRuntime } = await import("../../adapters/node/server.ts");
  const { MemoryLogger } = await import("../helpers/app.ts");
  const { tempDir } = await import("../helpers/temp.ts");
  const dir = tempDir("quarry-health-");
  const logger = new MemoryLogger();
  const config = parseConfig({ QUARRY_IP_RATE: "off", QUARRY_DATA_DIR: dir }, "test");
  const built = await buildPorts(config, nodeRuntime, logger);
  return { dir, logger, built, quarry: createQuarry(built.ports, config) };
}

describe("GET /health on SQLite", () => {
  it("calls a file that can be read but not written down (503, with the reason), logs it once, and recovers by itself", async () => {
    const Database = (await import("better-sqlite3")).default;
    const { dir, logger, quarry, built } = await sqliteQuarry();
    // Another connection holds the write lock (a stuck tool, as a full disk or a read-only
    // mount would refuse writes): reads still work, so a read-only check would say ok.
    const other = new Database(`${dir}/quarry.db`);
    try {
      expect((await quarry.app.request("/health")).status).toBe(200);
      other.exec("BEGIN EXCLUSIVE");
      for (let i = 0; i < 2; i++) {
        const res = await quarry.app.request("/health");
        expect(res.status).toBe(503);
        const body = await res.json();
        expect(body.status).toBe("unavailable");
        expect(body.services.database).toMatchObject({ status: "unreachable", error: expect.stringMatching(/locked/) });
        expect(v.safeParse(HealthRecord, body).success).toBe(true);
      }
      expect(logger.lines.filter((l) => String(l.msg).startsWith("database unavailable"))).toHaveLength(1);
      other.exec("ROLLBACK");
      const back = await quarry.app.request("/health");
      expect(back.status).toBe(200);
      expect((await back.json()).services.database).toEqual({ status: "ok", latency_ms: expect.any(Number) });
      expect(logger.lines.filter((l) => l.msg === "database available again")).toHaveLength(1);
    } finally {
      other.close();
      await quarry.stop();
      await built.close();
    }
  }, 30_000);
});

describe("GET /health on SQLite, the data directory removed", () => {
  it("is unavailable: writes would go on into a file no restart opens again", async () => {
    const { rmSync } = await import("node:fs");
    const { dir, quarry, built } = await sqliteQuarry();
    try {
      expect((await quarry.app.request("/health")).status).toBe(200);
      rmSync(dir, { recursive: true, force: true });
      const res = await quarry.app.request("/health");
      expect(res.status).toBe(503);
      expect((await res.json()).services.database).toMatchObject({ status: "unreachable", error: expect.stringMatching(/removed or replaced/) });
    } finally {
      await quarry.stop();
      await built.close();
    }
  });
});

describe("GET /openapi.json", () => {
  it("documents every route with its request schema, success and every error", async () => {
    const t = await makeApp({ options: { operations: echoOperation } });
    const res = await t.request("/openapi.json");
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual(["/health", "/v1/batch/scrape", "/v1/batch/scrape/{id}", "/v1/batch/scrape/{id}/events", "/v1/collections", "/v1/collections/{name}", "/v1/collections/{name}/documents", "/v1/collections/{name}/documents/{id}", "/v1/collections/{name}/search", "/v1/crawl", "/v1/crawl/{id}", "/v1/crawl/{id}/events", "/v1/keys", "/v1/keys/{key_id}", "/v1/map", "/v1/monitors", "/v1/monitors/{id}", "/v1/monitors/{id}/runs", "/v1/research", "/v1/scrape", "/v1/search", "/v1/social/research", "/v1/test/echo", "/v1/usage", "/v1/usage/daily", "/v1/video/search"]);
    // 404: a `collection` the account does not have.
    expect(Object.keys(doc.paths["/v1/scrape"].post.responses).sort()).toEqual(["200", "400", "401", "403", "404", "413", "415", "422", "429", "500", "502", "503", "504"]);
    // Each body's cap is stated: the gateway's 64 KiB, and 8 MB for a collection's documents.
    expect(doc.paths["/v1/scrape"].post.requestBody.description).toMatch(/at most 65,536 bytes/);
    expect(doc.paths["/v1/collections/{name}/documents"].post.requestBody.description).toMatch(/at most 8,000,000 bytes/);
    const create = doc.paths["/v1/keys"].post;
    expect(create.requestBody.content["application/json"].schema.required).toEqual(["name", "scopes"]);
    expect(create.requestBody.content["application/json"].schema.additionalProperties).toBe(false);
    expect(Object.keys(create.responses).sort()).toEqual(["201", "400", "401", "403", "413", "415", "429", "500", "503"]);
    expect(doc.paths["/v1/keys/{key_id}"].delete.responses["404"]).toBeDefined();
    expect(doc.paths["/v1/test/echo"].post.responses["429"].description).toContain("quota_exceeded");
    expect(doc.paths["/health"].get.responses["503"]).toBeDefined();
    expect(doc.paths["/health"].get.security).toEqual([]);
    // Monitors: PATCH pauses and resumes; the cap of the plan is a documented 403.
    expect(Object.keys(doc.paths["/v1/monitors/{id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(doc.paths["/v1/monitors"].post.responses["403"].description).toContain("too_many_monitors");
    const all = JSON.stringify(doc);
    for (const code of ["missing_auth", "invalid_auth", "invalid_key", "insufficient_scope", "rate_limited", "quota_exceeded", "invalid_request", "payload_too_large", "unsupported_media_type", "service_unavailable", "internal_error", "not_found", "url_not_allowed", "unsupported_content", "upstream_error", "timeout"]) {
      expect(all, code).toContain(code);
      expect(ERROR_STATUS).toHaveProperty(code);
    }
    await t.close();
  });
});

describe("GET /openapi.json for client generators", () => {
  const COUNT = /^(results_count|tokens_used|duration_ms|latency_ms|sources_count|returned|kept|used|remaining|quota|per_minute_limit|entries|sources_tracked|uptime_secs|retry_after|calls|results|read|failed|skipped|view_count|duration_seconds)$/;

  /** Every schema node under `node`, with the property name it sits under. */
  function* walk(node: unknown, name = ""): Generator<[string, Record<string, unknown>]> {
    if (!node || typeof node !== "object") return;
    const o = node as Record<string, unknown>;
    yield [name, o];
    for (const [k, child] of Object.entries(o.properties ?? {})) yield* walk(child, k);
    for (const key of ["items", "additionalProperties"]) if (o[key] && typeof o[key] === "object") yield* walk(o[key], name);
    for (const key of ["anyOf", "oneOf", "allOf"]) for (const c of (o[key] as unknown[] | undefined) ?? []) yield* walk(c, name);
  }

  it("names every operation, declares its server, headers and shared schemas, and types counts as integers", async () => {
    const t = await makeApp();
    const doc = await (await t.request("/openapi.json")).json();
    await t.close();
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
    const operations = Object.values(doc.paths).flatMap((p) => Object.values(p as Record<string, Record<string, unknown>>));
    const ids = operations.map((o) => o.operationId);
    expect(ids).toEqual(expect.arrayContaining(["search", "scrape", "videoSearch", "socialResearch", "research", "listKeys", "createKey", "revokeKey", "getUsage", "getHealth"]));
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses as Record<string, { headers: Record<string, unknown> }>)) {
        expect(Object.keys(response.headers), `${op.operationId} ${status}`).toEqual(expect.arrayContaining(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]));
        if (status === "429") expect(Object.keys(response.headers)).toContain("Retry-After");
      }
    }
    const text = JSON.stringify(doc);
    for (const [, target] of text.matchAll(/"\$ref":"#\/components\/(\w+\/\w+)"/g)) {
      const [kind, name] = target!.split("/");
      expect(doc.components[kind!]?.[name!], target).toBeDefined();
    }
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["Error", "KeyRecord", "BackendStatus"]));
    const offenders: string[] = [];
    for (const op of operations) {
      for (const response of Object.values(op.responses as Record<string, { content?: Record<string, { schema: unknown }> }>)) {
        for (const [name, node] of walk(response.content?.["application/json"]?.schema)) {
          if (COUNT.test(name) && node.type === "number") offenders.push(`${op.operationId}: ${name}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe("the reference's words and examples", () => {
  it("describes every operation, and every example body passes its own schema", async () => {
    const { createQuarry } = await import("../../core/app.ts");
    const { parseConfig } = await import("../../core/config.ts");
    const { validate } = await import("../../core/gateway/validate.ts");
    const t = await makeApp();
    const { routes } = createQuarry(t.ports, parseConfig({}));
    await t.close();
    for (const r of routes.filter((r) => r.group)) {
      expect(r.description, r.path).toMatch(/\. One unit|; one unit/);
      expect(r.example, r.path).toBeDefined();
    }
    for (const r of routes.filter((r) => r.body && r.example)) expect(validate(r.body!, r.example), r.path).toMatchObject({ ok: true });
  });
});
