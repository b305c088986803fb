/**
 * Proxy settings come from the environment handed to start-up, like every other setting
 * (issue #17): Deno passes its own env object, and an embedding service may pass one that is
 * not `process.env`. The page fetcher built by buildPorts must use that env's HTTP_PROXY.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPorts } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { parseConfig } from "../../core/config.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { startProxy, startServer, type TestServer } from "./helpers.ts";

let proxy: Awaited<ReturnType<typeof startProxy>>;
let site: TestServer;

beforeAll(async () => {
  proxy = await startProxy();
  site = await startServer("127.0.0.1", (_req, res) => res.end("through"));
});
afterAll(async () => Promise.all([proxy?.close(), site?.close()]));

describe("proxy settings", () => {
  it("page fetches use HTTP_PROXY from the env given to start-up, not from process.env", async () => {
    expect(process.env.HTTP_PROXY ?? process.env.http_proxy).toBeUndefined();
    const env = { QUARRY_DATA_DIR: ":memory:", QUARRY_EGRESS_ALLOW: "127.0.0.1/32", HTTP_PROXY: proxy.origin };
    const built = await buildPorts(parseConfig(env, "test"), nodeRuntime, new MemoryLogger());
    try {
      const page = await built.ports.pages.fetchPage(`${site.origin}/hello`);
      expect(new TextDecoder().decode(page.body)).toBe("through");
      expect(proxy.requests).toEqual([`GET ${site.origin}/hello`]);
    } finally {
      await built.close();
    }
  });

  it("no proxy in that env: page fetches connect directly", async () => {
    const before = proxy.requests.length;
    const built = await buildPorts(parseConfig({ QUARRY_DATA_DIR: ":memory:", QUARRY_EGRESS_ALLOW: "127.0.0.1/32" }, "test"), nodeRuntime, new MemoryLogger());
    try {
      await built.ports.pages.fetchPage(`${site.origin}/direct`);
      expect(proxy.requests.length).toBe(before);
    } finally {
      await built.close();
    }
  });
});
