/**
 * A URL Quarry will not reach gets one answer on every route that takes one, over real HTTP on a
 * real `quarry serve` process: scrape, map, crawl and batch scrape refuse an ftp:, file:,
 * javascript: or data: URL with the same 422 `url_not_allowed`, naming the field (for a batch,
 * which entry), and count nothing; a webhook URL with such a scheme is refused alike.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const SCHEMES = ["ftp://example.org/file", "file:///etc/passwd", "javascript:alert(1)", "data:text/html,<p>hi</p>"];
const GOOD = "https://example.org/";

let server: Server;
let env: Record<string, string>;
let key: string;

beforeAll(async () => {
  env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off" };
  key = createKeyCli(env, "acme", "scrape").key;
  server = await startServer("node", env);
}, 60_000);
afterAll(async () => server?.stop());

async function post(path: string, body: unknown) {
  const res = await fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, error: ((await res.json()) as { error: { code: string; message: string; details?: Array<{ field: string; message: string }> } }).error };
}

const said = (url: string) => `Quarry fetches only http and https URLs; "${new URL(url).protocol}" is not allowed.`;

describe("a URL Quarry will not reach, on every route", () => {
  it("scrape, map, crawl and batch scrape answer the same 422 url_not_allowed naming the field", async () => {
    for (const bad of SCHEMES) {
      const routes: Array<[string, unknown, string]> = [
        ["/v1/scrape", { url: bad }, "url"],
        ["/v1/map", { url: bad }, "url"],
        ["/v1/crawl", { url: bad }, "url"],
        ["/v1/batch/scrape", { urls: [GOOD, `${GOOD}a`, `${GOOD}b`, bad] }, "urls.3"],
      ];
      for (const [path, body, field] of routes) {
        const { status, error } = await post(path, body);
        expect({ status, code: error.code, message: error.message, details: error.details }, `${path} ${bad}`).toEqual({
          status: 422,
          code: "url_not_allowed",
          message: `${field}: ${said(bad)}`,
          details: [{ field, message: said(bad) }],
        });
      }
    }
  }, 60_000);

  it("a batch names every entry it refuses, and is refused whole", async () => {
    const { status, error } = await post("/v1/batch/scrape", { urls: [SCHEMES[0], GOOD, SCHEMES[2]] });
    expect(status).toBe(422);
    expect(error.message).toBe(`urls.0: ${said(SCHEMES[0]!)} (1 more in details)`);
    expect(error.details!.map((d) => d.field)).toEqual(["urls.0", "urls.2"]);
  }, 30_000);

  it("a webhook URL with another scheme is refused as the webhook's private address is: 422 naming webhook.url", async () => {
    for (const [path, body] of [["/v1/crawl", { url: GOOD }], ["/v1/batch/scrape", { urls: [GOOD] }]] as const) {
      const scheme = await post(path, { ...body, webhook: { url: "ftp://hooks.example/x" } });
      expect({ status: scheme.status, code: scheme.error.code, details: scheme.error.details }, path).toEqual({
        status: 422, code: "url_not_allowed", details: [{ field: "webhook.url", message: said("ftp://hooks.example/x") }],
      });
      const private_ = await post(path, { ...body, webhook: { url: "http://10.0.0.1/hook" } });
      expect({ status: private_.status, code: private_.error.code, field: private_.error.details?.[0]?.field }, path).toEqual({ status: 422, code: "url_not_allowed", field: "webhook.url" });
    }
  }, 30_000);

  it("something that is not a URL at all stays a 400 invalid_request on every route", async () => {
    for (const [path, body, field] of [["/v1/scrape", { url: "not a url" }, "url"], ["/v1/map", { url: "not a url" }, "url"], ["/v1/crawl", { url: "not a url" }, "url"], ["/v1/batch/scrape", { urls: [GOOD, "not a url"] }, "urls.1"]] as const) {
      const { status, error } = await post(path, body);
      expect({ status, code: error.code, field: error.details?.[0]?.field }, path).toEqual({ status: 400, code: "invalid_request", field });
    }
  }, 30_000);

  it("none of these refusals counts toward the quota", async () => {
    const res = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    const usage = (await res.json()) as { used: number; endpoints: Record<string, number> };
    expect(usage.used).toBe(0);
    expect(usage.endpoints).toMatchObject({ scrape: 0, crawl: 0 });
  }, 30_000);
});
