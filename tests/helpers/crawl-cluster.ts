/**
 * Three `quarry serve` processes sharing one temporary PostgreSQL database, beside the local test
 * site: the set-up of the multi-instance crawl tests. All three start at once, so Quarry's and
 * pg-boss's migrations must take turns by themselves.
 */
import { tempDatabase } from "./pg.ts";
import { startServer, type Server } from "./server.ts";
import { startTestSite, type TestSite } from "./test-site.ts";

export interface CrawlCluster {
  db: { url: string; drop(): Promise<void> };
  site: TestSite;
  servers: Server[];
  env: Record<string, string>;
  close(signal?: NodeJS.Signals): Promise<void>;
}

export async function startCrawlCluster(name: string, crawlDelay: number, extraEnv: Record<string, string> = {}): Promise<CrawlCluster> {
  const db = await tempDatabase(name);
  const site = await startTestSite({ crawlDelay });
  const env = {
    QUARRY_DATABASE_URL: db.url,
    QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
    QUARRY_IP_RATE: "off",
    QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}',
    QUARRY_LOG_LEVEL: "debug",
    QUARRY_CRAWL_CONCURRENCY: "2",
    ...extraEnv,
  };
  const servers = await Promise.all([0, 1, 2].map(() => startServer("node", env)));
  return {
    db, site, servers, env,
    async close(signal) {
      await Promise.all(servers.map((s) => s.stop(signal)));
      await site.close();
      await db.drop();
    },
  };
}
