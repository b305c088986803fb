/**
 * A job's status says what became of its webhook deliveries, so the user who set `webhook.url`
 * learns from the API (not only an operator from the log) that the receiver never got the events.
 * A real `quarry serve` on SQLite and on PostgreSQL, the local test site as the pages, and a real
 * local receiver: one path answers 500 to everything, one accepts. With the default retries (5
 * attempts over about 15 s), the failing deliveries are given up and counted as failed with
 * `http_500`; the accepted ones are counted as delivered, as many as the receiver got. A URL whose
 * host does not resolve fails with `url_not_allowed`. The counts survive a restart, and the secret
 * never shows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { json, waitFor, type Job } from "../helpers/job-http.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { startTestSite, type TestSite } from "../helpers/test-site.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";

const SECRET = "s3cret-never-on-the-status";
const EVENTS = ["batch.started", "batch.page", "batch.page", "batch.completed"];
let site: TestSite;
let hook: Receiver;
let hookBase: string;
/** Each delivery: the receiver's path, the job it is about and its event type. */
const received = () => hook.got.map((g) => ({ path: g.path, jobId: String(g.json.id), type: String(g.json.type), delivery: String(g.headers["x-quarry-delivery"]), at: g.at }));

beforeAll(async () => {
  site = await startTestSite();
  hook = await startReceiver((d) => (d.path === "/fail" ? 500 : 204));
  hookBase = hook.base;
});
afterAll(async () => {
  await site?.close();
  await hook?.close();
});

type Store = { env: Record<string, string>; close(): Promise<void> };
const STORES: Array<[string, () => Promise<Store>]> = [
  ["SQLite", async () => ({ env: { QUARRY_DATA_DIR: tempDataDir() }, close: async () => {} })],
  ["PostgreSQL", async () => {
    const db = await tempDatabase("webhook_status");
    return { env: { QUARRY_DATABASE_URL: db.url }, close: db.drop };
  }],
];

/** Finished, with each of its `events` deliveries delivered or given up (the last is stored just after the job ends). */
const settled = (events: number) => (j: Job) => j.status === "completed" && j.webhook?.pending === 0 && j.webhook.delivered + j.webhook.failed === events;

/** One store's server and its four jobs, all settled. */
type Prepared = {
  env: Record<string, string>;
  server: Server;
  key: string;
  jobs: Record<string, { id: string; path: string; status: Job; started: number }>;
  close(): Promise<void>;
};

async function startJob(p: Pick<Prepared, "server" | "key">, body: Record<string, unknown>, path = "/v1/batch/scrape"): Promise<string> {
  const res = await fetch(`${p.server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${p.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function prepare(open: () => Promise<Store>): Promise<Prepared> {
  const store = await open();
  const env = { ...store.env, QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_IP_RATE: "off", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000,"jobs_concurrent":4}}' };
  const key = createKeyCli(env, "acme", "scrape").key;
  const p: Prepared = { env, key, server: await startServer("node", env), jobs: {}, close: async () => {
    await p.server?.stop();
    await store.close();
  } };
  const urls = [`${site.ipUrl}/about`, `${site.ipUrl}/contact`];
  // All three at once: the failing ones retry over the same 15 s.
  const started = Date.now();
  const [refused, accepted, unresolvable, crawl] = await Promise.all([
    startJob(p, { urls, webhook: { url: `${hookBase}/fail`, secret: SECRET } }),
    startJob(p, { urls, webhook: { url: `${hookBase}/ok`, secret: SECRET } }),
    startJob(p, { urls: urls.slice(0, 1), webhook: { url: "http://hooks.invalid/x", events: ["completed"] } }),
    startJob(p, { url: `${site.ipUrl}/`, limit: 1, webhook: { url: `${hookBase}/ok`, events: ["started", "completed"] } }, "/v1/crawl"),
  ]);
  const waits = ([["refused", refused, 4], ["accepted", accepted, 4], ["unresolvable", unresolvable, 1], ["crawl", crawl, 2]] as const).map(async ([name, id, events]) => {
    const path = name === "crawl" ? "/v1/crawl" : "/v1/batch/scrape";
    p.jobs[name] = { id: id!, path, started, status: await waitFor(`${p.server.url}${path}/${id}`, key, settled(events), 60_000) };
  });
  await Promise.all(waits);
  return p;
}

// Both stores' servers start together and their deliveries retry over the same 15 s (each job's
// deliveries are told apart by its id), rather than one store's wait after the other's.
const prepared = new Map<string, Promise<Prepared>>();
beforeAll(() => {
  for (const [name, open] of STORES) {
    const ready = prepare(open);
    ready.catch(() => {}); // awaited by its own describe, which fails with the cause
    prepared.set(name, ready);
  }
});
afterAll(async () => {
  for (const ready of prepared.values()) await ready.then((p) => p.close(), () => {});
});

describe.each(STORES)("a job's webhook deliveries on its status (%s)", (name) => {
  let env: Record<string, string>;
  let server: Server;
  let key: string;
  let jobs: Prepared["jobs"];
  let p: Prepared;
  const batch = (body: Record<string, unknown>, path?: string) => startJob(p, body, path);

  beforeAll(async () => {
    p = await prepared.get(name)!;
    ({ env, server, key, jobs } = p);
  }, 120_000);

  it("a receiver that answers 500 to every attempt: each event given up after 5 attempts, failed with http_500", async () => {
    const { id, status: j, started } = jobs.refused!;
    const got = received().filter((r) => r.jobId === id);
    // Every event was attempted 5 times, and none was accepted.
    expect(got.map((r) => r.type).sort()).toEqual(EVENTS.flatMap((e) => [e, e, e, e, e]).sort());
    expect(new Set(got.map((r) => r.delivery)).size).toBe(4);
    expect(j.webhook).toEqual({ url: `${hookBase}/fail`, delivered: 0, pending: 0, failed: 4, last_error: { event: expect.any(String), at: expect.any(String), error: "http_500" } });
    expect(EVENTS.map((e) => e.slice("batch.".length))).toContain(j.webhook.last_error.event);
    const at = Date.parse(j.webhook.last_error.at);
    expect(at).toBeGreaterThanOrEqual(Math.max(...got.map((r) => r.at)) - 1000);
    expect(at).toBeLessThanOrEqual(Date.now());
    expect(at).toBeGreaterThan(started);
    expect(JSON.stringify(j)).not.toContain(SECRET);
    // The Firecrawl-compatible status carries the same object.
    const fc = await json(`${server.url}/compat/firecrawl/v2/batch/scrape/${id}`, key);
    expect(fc.quarry.webhook).toEqual(j.webhook);
    expect(JSON.stringify(fc)).not.toContain(SECRET);
  });

  it("a receiver that accepts: every event delivered once, counted as many as the receiver got, no error", async () => {
    const { id, status: j } = jobs.accepted!;
    const got = received().filter((r) => r.jobId === id);
    expect(got.map((r) => r.type).sort()).toEqual([...EVENTS].sort());
    expect(j.webhook).toEqual({ url: `${hookBase}/ok`, delivered: got.length, pending: 0, failed: 0, last_error: null });
    expect(JSON.stringify(j)).not.toContain(SECRET);
  });

  it("a crawl's status shows its deliveries too", async () => {
    const { id, status: j } = jobs.crawl!;
    expect(received().filter((r) => r.jobId === id).map((r) => r.type).sort()).toEqual(["crawl.completed", "crawl.started"]);
    expect(j.webhook).toEqual({ url: `${hookBase}/ok`, delivered: 2, pending: 0, failed: 0, last_error: null });
  });

  it("a webhook whose host does not resolve: given up with url_not_allowed", async () => {
    const { status: j } = jobs.unresolvable!;
    expect(j.webhook).toEqual({ url: "http://hooks.invalid/x", delivered: 0, pending: 0, failed: 1, last_error: { event: "completed", at: expect.any(String), error: "url_not_allowed" } });
  });

  it("a job without a webhook has no webhook field", async () => {
    const id = await batch({ urls: [`${site.ipUrl}/about`] });
    const j = await waitFor(`${server.url}/v1/batch/scrape/${id}`, key, (x) => x.status === "completed", 30_000);
    expect(j.status).toBe("completed");
    expect("webhook" in j).toBe(false);
  });

  it("keeps the counts across a restart, and every instance shows the same: they are in the store, not in a process", async () => {
    await server.stop();
    server = p.server = await startServer("node", env);
    // PostgreSQL serves several instances at once: a second one reads the same.
    const other = "QUARRY_DATABASE_URL" in env ? await startServer("node", env) : null;
    try {
      for (const [name, { id, path, status: before }] of Object.entries(jobs)) {
        expect(before.webhook?.delivered + before.webhook?.failed, name).toBeGreaterThan(0);
        for (const s of [server, other]) if (s) expect((await json(`${s.url}${path}/${id}`, key)).webhook, name).toEqual(before.webhook);
      }
    } finally {
      await other?.stop();
    }
  }, 60_000);
});
