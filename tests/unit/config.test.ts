import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../core/config.ts";

function errorOf(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (e) {
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("configuration", () => {
  it("has the documented defaults", () => {
    const c = parseConfig({});
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(8080);
    expect(c.dataDir).toBe("./data");
    expect(c.ipRate).toEqual({ ratePerSecond: 100, burst: 200 });
    expect(c.trustProxy).toBe(false);
    expect(c.plans.free).toEqual({ id: "free", quota: 1000, perMinute: 60, jobsConcurrent: 2, jobsStorageBytes: 100 * 2 ** 20, indexDocuments: 1000, indexBytes: 50 * 2 ** 20, monitors: 5 });
    expect(c.plans.enterprise.quota).toBeNull();
    expect(c.backends.searxng.url).toBeUndefined();
  });

  it("reads QUARRY_JOB_RECOVERY as a duration from 1 s to 1 h, 30 s by default", () => {
    expect(parseConfig({}).jobs.recoveryMs).toBe(30_000);
    expect(parseConfig({ QUARRY_JOB_RECOVERY: "5s" }).jobs.recoveryMs).toBe(5000);
    expect(parseConfig({ QUARRY_JOB_RECOVERY: "2m" }).jobs.recoveryMs).toBe(120_000);
    for (const bad of ["500ms", "2h", "soon"]) {
      const err = errorOf({ QUARRY_JOB_RECOVERY: bad });
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toContain("QUARRY_JOB_RECOVERY");
    }
  });

  it("applies QUARRY_PLANS overrides field by field, null meaning unlimited", () => {
    const c = parseConfig({ QUARRY_PLANS: '{"free":{"quota":5,"per_minute":3},"pro":{"quota":null},"team":{"quota":50,"per_minute":9}}' });
    expect(c.plans.free).toEqual({ id: "free", quota: 5, perMinute: 3, jobsConcurrent: 2, jobsStorageBytes: 100 * 2 ** 20, indexDocuments: 1000, indexBytes: 50 * 2 ** 20, monitors: 5 });
    expect(c.plans.pro).toEqual({ id: "pro", quota: null, perMinute: 500, jobsConcurrent: 10, jobsStorageBytes: 5 * 2 ** 30, indexDocuments: 100_000, indexBytes: 5 * 2 ** 30, monitors: 100 });
    // A new plan takes the job limits it does not name from the lowest plan (as QUARRY_PLANS set it).
    expect(c.plans.team).toEqual({ id: "team", quota: 50, perMinute: 9, jobsConcurrent: 2, jobsStorageBytes: 100 * 2 ** 20, indexDocuments: 1000, indexBytes: 50 * 2 ** 20, monitors: 5 });
  });

  it("reads each plan's job limits from QUARRY_PLANS: jobs_concurrent, and jobs_storage_bytes (null = no cap)", () => {
    const c = parseConfig({ QUARRY_PLANS: '{"free":{"jobs_concurrent":1,"jobs_storage_bytes":5000000},"enterprise":{"jobs_storage_bytes":null},"team":{"quota":50,"per_minute":9,"jobs_concurrent":7}}' });
    expect(c.plans.free).toMatchObject({ jobsConcurrent: 1, jobsStorageBytes: 5_000_000 });
    expect(c.plans.enterprise).toMatchObject({ jobsConcurrent: 50, jobsStorageBytes: null });
    expect(c.plans.team).toMatchObject({ jobsConcurrent: 7, jobsStorageBytes: 5_000_000 });
    expect(c.jobs).toMatchObject({ pageBytes: 2 ** 20, pageLinks: 1000 });
    expect(parseConfig({ QUARRY_JOB_PAGE_BYTES: "256KB", QUARRY_JOB_PAGE_LINKS: "50" }).jobs).toMatchObject({ pageBytes: 256 * 1024, pageLinks: 50 });
  });

  it("reads each plan's collection limits from QUARRY_PLANS: index_documents and index_bytes (null = no cap), a new plan taking free's", () => {
    const c = parseConfig({ QUARRY_PLANS: '{"free":{"index_bytes":1000000},"pro":{"index_bytes":null,"index_documents":null},"team":{"quota":50,"per_minute":9,"index_documents":7}}' });
    expect(c.plans.free).toMatchObject({ indexDocuments: 1000, indexBytes: 1_000_000 });
    expect(c.plans.pro).toMatchObject({ indexDocuments: null, indexBytes: null });
    expect(c.plans.team).toMatchObject({ indexDocuments: 7, indexBytes: 1_000_000 });
    expect(parseConfig({}).plans.enterprise).toMatchObject({ indexDocuments: 1_000_000, indexBytes: 50 * 2 ** 30 });
  });

  it.each([
    [{ QUARRY_PLANS: '{"free":{"index_bytes":"50MB"}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"free":{"index_bytes":-1}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"free":{"index_bytes":1.5}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PORT: "99999" }, "QUARRY_PORT"],
    [{ QUARRY_PLANS: "{nope" }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"free":{"quota":-1}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"free":{"per_month":1}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"gold":{"quota":1}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"free":{"jobs_concurrent":0}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"free":{"jobs_storage_bytes":"1GB"}}' }, "QUARRY_PLANS"],
    [{ QUARRY_PLANS: '{"free":{"jobs_storage_bytes":100000}}' }, "QUARRY_PLANS"], // less than one page (1 MB)
    [{ QUARRY_JOB_PAGE_BYTES: "2KB" }, "QUARRY_JOB_PAGE_BYTES"],
    [{ QUARRY_JOB_PAGE_LINKS: "0" }, "QUARRY_JOB_PAGE_LINKS"],
    [{ QUARRY_IP_RATE: "fast" }, "QUARRY_IP_RATE"],
    [{ QUARRY_TRUST_PROXY: "maybe" }, "QUARRY_TRUST_PROXY"],
    [{ QUARRY_DATABASE_URL: "mysql://x" }, "QUARRY_DATABASE_URL"],
    [{ QUARRY_REDIS_URL: "not a url" }, "QUARRY_REDIS_URL"],
    [{ QUARRY_SEARXNG_URL: "ftp://x" }, "QUARRY_SEARXNG_URL"],
    [{ QUARRY_LOG_LEVEL: "loud" }, "QUARRY_LOG_LEVEL"],
    [{ QUARRY_CORS_ORIGINS: "app.example.com" }, "QUARRY_CORS_ORIGINS"],
    [{ QUARRY_CORS_ORIGINS: "https://app.example.com/path" }, "QUARRY_CORS_ORIGINS"],
    [{ QUARRY_CORS_ORIGINS: "https://ok.example, ftp://files.example" }, "QUARRY_CORS_ORIGINS"],
    [{ QUARRY_CORS_ORIGINS: "https://app.example.com?x=1" }, "QUARRY_CORS_ORIGINS"],
    [{ QUARRY_CACHE_MAX_BYTES: "lots" }, "QUARRY_CACHE_MAX_BYTES"],
    [{ QUARRY_CACHE_MAX_BYTES: "-5MB" }, "QUARRY_CACHE_MAX_BYTES"],
    [{ QUARRY_CACHE_MAX_ENTRY_BYTES: "2 TB" }, "QUARRY_CACHE_MAX_ENTRY_BYTES"],
  ])("refuses %o naming %s", (env, variable) => {
    const err = errorOf(env);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(variable)).toBe(true);
  });

  it("reads QUARRY_CORS_ORIGINS as normalised origins, none by default", () => {
    expect(parseConfig({}).corsOrigins).toEqual([]);
    expect(parseConfig({ QUARRY_CORS_ORIGINS: " https://App.Example.com/ , http://127.0.0.1:5173 " }).corsOrigins)
      .toEqual(["https://app.example.com", "http://127.0.0.1:5173"]);
    expect(parseConfig({ QUARRY_CORS_ORIGINS: "https://a.example,*" }).corsOrigins).toEqual(["*"]);
  });

  it("reads the cache bounds as sizes with binary units", () => {
    expect(parseConfig({}).cache).toEqual({ maxBytes: 32 * 2 ** 20, maxEntryBytes: 2 * 2 ** 20 });
    expect(parseConfig({ QUARRY_CACHE_MAX_BYTES: "64MB", QUARRY_CACHE_MAX_ENTRY_BYTES: "512k" }).cache).toEqual({ maxBytes: 64 * 2 ** 20, maxEntryBytes: 512 * 1024 });
    expect(parseConfig({ QUARRY_CACHE_MAX_BYTES: "1048576" }).cache.maxBytes).toBe(2 ** 20);
    expect(parseConfig({ QUARRY_CACHE_MAX_BYTES: "1.5 GiB" }).cache.maxBytes).toBe(1.5 * 2 ** 30);
    expect(parseConfig({ QUARRY_CACHE_MAX_BYTES: "0" }).cache.maxBytes).toBe(0);
  });

  it("reads the extraction workers and their idle time, and names the variable of a bad value", () => {
    expect(parseConfig({}).extract).toEqual({ workers: 1, idleMs: 10_000 });
    expect(parseConfig({ QUARRY_EXTRACT_WORKERS: "0", QUARRY_EXTRACT_IDLE: "60" }).extract).toEqual({ workers: 0, idleMs: 60_000 });
    for (const bad of ["-1", "17", "two", "1.5"]) expect(() => parseConfig({ QUARRY_EXTRACT_WORKERS: bad })).toThrow(/^QUARRY_EXTRACT_WORKERS: .* whole number from 0 to 16/);
    for (const bad of ["0", "3601", "1s"]) expect(() => parseConfig({ QUARRY_EXTRACT_IDLE: bad })).toThrow(/^QUARRY_EXTRACT_IDLE: /);
  });

  it("reads backend URLs and credentials by id", () => {
    const c = parseConfig({ QUARRY_BRAVE_KEY: "k", QUARRY_SEARXNG_URL: "http://127.0.0.1:8888", QUARRY_IP_RATE: "off" });
    expect(c.backends.brave.key).toBe("k");
    expect(c.backends.searxng.url).toBe("http://127.0.0.1:8888");
    expect(c.ipRate).toBeNull();
  });
});
