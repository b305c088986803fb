/** The ofetch-based backend client: retries off, a timeout, the honest User-Agent. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiFetch } from "../../adapters/fetch/api-client.ts";
import { createApiFetchPort } from "../../adapters/fetch/api-fetch.ts";
import { quarryUserAgent } from "../../adapters/fetch/types.ts";
import { startServer, type TestServer } from "./helpers.ts";

let api: TestServer;

beforeAll(async () => {
  api = await startServer("127.0.0.1", (req, res) => {
    if (req.url === "/fail") {
      res.writeHead(503, { "content-type": "application/json" });
      return res.end('{"error":"down"}');
    }
    if (req.url === "/slow") return; // never answers
    if (req.url === "/moved") return res.writeHead(302, { location: "/ok" }).end();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ua: req.headers["user-agent"], accept: req.headers.accept }));
  });
});

afterAll(() => api?.close());

describe("createApiFetch", () => {
  it("sends the honest User-Agent and parses JSON", async () => {
    const body = await createApiFetch()<{ ua: string; accept: string }>(`${api.origin}/ok`);
    expect(body).toEqual({ ua: quarryUserAgent(), accept: "application/json" });
  });

  it("does not retry (the backend runner owns retries)", async () => {
    const before = api.requests.filter((r) => r.endsWith("/fail")).length;
    await expect(createApiFetch()(`${api.origin}/fail`)).rejects.toMatchObject({ statusCode: 503 });
    expect(api.requests.filter((r) => r.endsWith("/fail")).length).toBe(before + 1);
  });

  it("times out", async () => {
    const started = Date.now();
    await expect(createApiFetch({ timeoutMs: 200 })(`${api.origin}/slow`)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("serves as a FetchPort without throwing on error statuses", async () => {
    const port = createApiFetchPort();
    const res = await port(`${api.origin}/fail`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "down" });
  });

  it("as the upstream transport: the request's own headers win, and manual redirects come back as they are", async () => {
    const port = createApiFetchPort({ accept: null });
    const own = await (await port(`${api.origin}/ok`, { headers: { "user-agent": "com.google.android.youtube/19" } })).json();
    expect(own).toEqual({ ua: "com.google.android.youtube/19", accept: "*/*" }); // no JSON Accept forced on HTML upstreams
    const moved = await port(`${api.origin}/moved`, { redirect: "manual" });
    expect([moved.status, moved.headers.get("location")]).toEqual([302, "/ok"]);
  });
});
