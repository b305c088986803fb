/**
 * Scrape's formats a model writes (issue #31 item 6), with QUARRY_LLM_URL pointed at a scripted
 * OpenAI-compatible server on 127.0.0.1 (the model is an edge the tests cannot reach): `json`
 * fills the caller's schema and is validated against it, sent back once when it does not
 * validate, refused (502, free) when it still does not; `summary` is the model's, or extractive
 * when the model fails. In process, natively and through Firecrawl's v2 scrape.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

const PAGE = `<!doctype html><html><head><title>Blue tack, 75 g</title></head><body><main><article><h1>Blue tack, 75 g</h1>
<p>Reusable adhesive putty for posters and notes. It costs 2.49 euros and is in stock at every shop.</p>
<p>It leaves no marks on painted walls when it is removed within a year of being put up.</p></article></main></body></html>`;

const SCHEMA = { type: "object", properties: { name: { type: "string" }, price: { type: "number" }, in_stock: { type: "boolean" } }, required: ["name", "price"], additionalProperties: false };

interface Call {
  system: string;
  messages: Array<{ role: string; content: string }>;
}

let model: Server;
let modelUrl = "";
/** What the model answers next, one entry per call (a number is an HTTP error status). */
let replies: Array<string | number> = [];
let calls: Call[] = [];
let site: PageServer;
let t: TestApp;
let key: string;

beforeAll(async () => {
  model = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string }> };
      calls.push({ system: body.messages[0]!.content, messages: body.messages });
      const next = replies.shift() ?? 500;
      if (typeof next === "number") return void res.writeHead(next, { "content-type": "application/json" }).end('{"error":"scripted failure"}');
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content: next } }], usage: { total_tokens: 100 } }));
    });
  });
  await new Promise<void>((r) => model.listen(0, "127.0.0.1", () => r()));
  modelUrl = `http://127.0.0.1:${(model.address() as { port: number }).port}/v1`;
  site = await startPageServer();
  site.route("/item", send("text/html; charset=utf-8", PAGE));
  t = await makeApp({ pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }), env: { QUARRY_LLM_URL: modelUrl, QUARRY_LLM_MODEL: "scripted" } });
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  await site?.close();
  model?.closeAllConnections();
  await new Promise((r) => model?.close(r));
});
beforeEach(() => {
  replies = [];
  calls = [];
});

const scrape = (json: Record<string, unknown>) => t.request("/v1/scrape", { method: "POST", key, json: { url: `${site.url}/item`, max_age_ms: 0, ...json } });
const used = async () => (await (await t.request("/v1/usage", { key })).json()).used as number;

describe("json: the model fills the schema from the page", () => {
  it("a valid answer is the data; the model saw the schema, the prompt and the page", async () => {
    replies = ['{"name": "Blue tack, 75 g", "price": 2.49, "in_stock": true}'];
    const res = await scrape({ formats: ["json"], json_options: { schema: SCHEMA, prompt: "the product" } });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.data.json).toEqual({ name: "Blue tack, 75 g", price: 2.49, in_stock: true });
    expect(body.meta.tokens_used).toBeGreaterThanOrEqual(100);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.system).toContain(JSON.stringify(SCHEMA));
    expect(calls[0]!.messages[1]!.content).toContain("the product");
    expect(calls[0]!.messages[1]!.content).toContain("It costs 2.49 euros");
  });

  it("an answer that does not validate is sent back once with what was wrong, and the second is used", async () => {
    replies = ['Here it is: {"name": "Blue tack", "price": "2.49 euros"}', '```json\n{"name": "Blue tack", "price": 2.49}\n```'];
    const body = await (await scrape({ formats: ["json", "markdown"], json_options: { schema: SCHEMA } })).json();
    expect(body.data.json).toEqual({ name: "Blue tack", price: 2.49 });
    expect(calls).toHaveLength(2);
    const retry = calls[1]!.messages.at(-1)!.content;
    expect(retry).toContain("did not match the schema");
    expect(retry).toContain("/price");
  });

  it("still invalid after the retry: 502 upstream_error saying why, and nothing counted", async () => {
    const before = await used();
    replies = ['{"name": 7}', "no JSON at all"];
    const res = await scrape({ formats: ["json"], json_options: { schema: SCHEMA } });
    expect(res.status).toBe(502);
    const err = (await res.json()).error;
    expect(err.code).toBe("upstream_error");
    expect(err.message).toMatch(/could not be used after 2 tries: the answer was not JSON/);
    expect(calls).toHaveLength(2);
    expect(await used()).toBe(before);
  });

  it("a schema the validator cannot use is a 400 before the page is read", async () => {
    const res = await scrape({ formats: ["json"], json_options: { schema: { $ref: "#/definitions/missing" } } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.details[0].field).toBe("json_options.schema");
    expect(calls).toHaveLength(0);
  });

  it("through Firecrawl's v2 scrape: {type: json, schema, prompt} answers data.json", async () => {
    replies = ['{"name": "Blue tack, 75 g", "price": 2.49}'];
    const res = await (await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/item`, maxAge: 0, formats: [{ type: "json", schema: SCHEMA, prompt: "the product" }] } })).json();
    expect(res.success).toBe(true);
    expect(res.data.json).toEqual({ name: "Blue tack, 75 g", price: 2.49 });
  });
});

describe("summary", () => {
  it("is the model's when it answers, extractive with the reason when it fails", async () => {
    replies = ["Blue tack is a reusable putty that costs 2.49 euros."];
    const llm = await (await scrape({ formats: ["summary"] })).json();
    expect(llm.data.summary).toBe("Blue tack is a reusable putty that costs 2.49 euros.");
    expect(llm.meta.summary).toBe("llm");
    replies = [503];
    const fallback = await (await scrape({ formats: ["summary"] })).json();
    expect(fallback.meta.summary).toBe("extractive");
    expect(fallback.meta.summary_error).toMatch(/HTTP 503/);
    expect(fallback.data.summary).toContain("Reusable adhesive putty for posters and notes.");
  });
});
