/**
 * pg-boss 10 marks a task done or failed without awaiting it (manager.js, `watch`): while
 * PostgreSQL is down, that write rejects with nobody to catch it, and Node ends the whole server
 * on the unhandled rejection. A crawl running when PostgreSQL went away took the server down with
 * it. The queue must survive that: the task stays active in pg-boss, expires and is retried.
 */
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { PgBossQueue } from "../../adapters/jobs/pg-boss-queue.ts";
import type { JobTask } from "../../core/ports/job-model.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { PrivatePostgres } from "../helpers/private-services.ts";

const unhandled: unknown[] = [];
const onUnhandled = (err: unknown) => void unhandled.push(err);
process.on("unhandledRejection", onUnhandled);
afterAll(() => void process.off("unhandledRejection", onUnhandled));

it("a task that ends while PostgreSQL is down leaves no unhandled rejection, and is worked again once it is back", async () => {
  const server = await PrivatePostgres.start();
  const logger = new MemoryLogger();
  const queue = new PgBossQueue(server.url, logger, undefined, 1000);
  const seen: string[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  const first = new Promise<void>((r) =>
    void queue.start(async (task) => {
      seen.push(task.url);
      if (seen.length === 1) {
        r();
        await held; // PostgreSQL goes down while this task runs
      }
    }, 1),
  );
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const task: JobTask = { jobId: "crawl_x", url: "http://x.test/", depth: 0 };
  await queue.enqueueWith((text, values) => client.query(text, values), [task]);
  await client.end();
  await first;
  server.down();
  release(); // pg-boss now marks the task completed, on a database that is not there
  await new Promise((r) => setTimeout(r, 1500));
  expect(unhandled).toEqual([]);
  server.up();
  // Its completion was lost with the database: it expires and is handed out again.
  const until = Date.now() + 30_000;
  while (seen.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  expect(seen).toEqual([task.url, task.url]);
  await queue.stop();
  expect(unhandled).toEqual([]);
}, 60_000);
