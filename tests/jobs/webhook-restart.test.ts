/**
 * Webhook deliveries survive a SIGKILL: a delivery still pending when `quarry serve` is killed is
 * made (signed, verifiable) by the restarted server, and the deliveries already made are not made
 * again. The receiver is a real HTTP server that refuses the job's `completed` event until the
 * first server is dead.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { startTestSite, type TestSite } from "../helpers/test-site.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";

let site: TestSite;
let server: Server | null = null;
let hook: Receiver;
let hookUrl: string;
let refuseCompleted = true;
/** Each delivery: its event type, body, signature and id, and what the receiver answered. */
const received = () => hook.got.map((g) => ({ type: String(g.json.type), body: g.body, sig: g.headers["x-quarry-signature"] as string | undefined, delivery: g.headers["x-quarry-delivery"] as string | undefined, answered: g.status }));

beforeAll(async () => {
  site = await startTestSite();
  hook = await startReceiver((d) => (refuseCompleted && String(d.json.type).endsWith(".completed") ? 503 : 204));
  hookUrl = hook.url;
});
afterAll(async () => {
  await server?.stop("SIGKILL");
  await site?.close();
  await hook?.close();
});

async function until<T>(what: string, ms: number, get: () => T | Promise<T>): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const delivered = (out: string) => (out.match(/webhook delivered/g) ?? []).length;

describe("webhook deliveries across a SIGKILL", () => {
  it("delivers a pending delivery after the restart, and none that was delivered before it", async () => {
    const dir = tempDataDir();
    const env = { QUARRY_DATA_DIR: dir, QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_LOG_LEVEL: "debug" };
    const { key } = createKeyCli(env, "acme", "scrape");
    server = await startServer("node", env);
    const res = await fetch(`${server.url}/v1/batch/scrape`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ urls: [`${site.ipUrl}/about`, `${site.ipUrl}/contact`], webhook: { url: hookUrl, secret: "s3cret" } }),
    });
    const job = (await res.json()) as { id: string };
    expect(job.id).toMatch(/^batch_/);
    // started and both pages delivered (and forgotten by the store: logged after), completed refused once.
    const first = server;
    await until("three deliveries and a refused completed", 30_000, () => delivered(first.output()) >= 3 && received().some((r) => r.answered === 503));
    await server.stop("SIGKILL");
    const refused = received().filter((r) => r.answered === 503);
    refuseCompleted = false;

    server = await startServer("node", env);
    const second = server;
    await until("the completed event after the restart", 30_000, () => received().some((r) => r.type === "batch.completed" && r.answered === 204));
    await until("the restarted server to log it", 5000, () => delivered(second.output()) >= 1);

    const ok = received().filter((r) => r.answered === 204);
    expect(ok.map((r) => r.type).sort()).toEqual(["batch.completed", "batch.page", "batch.page", "batch.started"]);
    expect(delivered(second.output())).toBe(1);
    for (const r of received()) {
      expect(r.sig).toBe(`sha256=${createHmac("sha256", "s3cret").update(r.body).digest("hex")}`);
      expect(JSON.parse(r.body).id).toBe(job.id);
    }
    // The delivery made after the restart is the one refused before it: same id, same body.
    const done = ok.find((r) => r.type === "batch.completed")!;
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect([r.delivery, r.body]).toEqual([done.delivery, done.body]);
    expect(new Set(ok.map((r) => r.delivery)).size).toBe(4);
  }, 90_000);
});
