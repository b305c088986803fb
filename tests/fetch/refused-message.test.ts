/**
 * Refusals must not reveal the operator's internal DNS (issue #19, item 6): a private literal,
 * `localhost`, a name resolving to a private address and a name that does not resolve at all all
 * answer POST /v1/scrape with the same status, code and message. Only the debug log says which.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch } from "../../adapters/fetch/safe-fetch.ts";
import { parseAllowList } from "../../core/net/allow-list.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { mapResolver } from "./helpers.ts";

let app: TestApp;
let key: string;

beforeAll(async () => {
  const pages = createSafeFetch({ allow: parseAllowList([]), resolver: mapResolver({ "db.internal": ["10.0.0.7"], "cache.internal": ["127.0.0.1"] }) });
  app = await makeApp({ pages });
  key = (await app.key("acme", ["scrape"])).secret;
});
afterAll(() => app?.close());

describe("one answer for every refused target", () => {
  it("private literal, localhost, private names and unknown names are indistinguishable", async () => {
    const answers = [];
    for (const url of ["http://10.0.0.7/", "http://localhost:9/", "http://db.internal/", "http://cache.internal:9/", "http://no-such-host.internal/"]) {
      const res = await app.request("/v1/scrape", { method: "POST", key, json: { url } });
      const { error } = await res.json();
      answers.push({ status: res.status, code: error.code, message: error.message });
    }
    expect(answers[0]).toMatchObject({ status: 422, code: "url_not_allowed" });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.message).not.toMatch(/10\.0\.0\.7|internal|localhost|resolve to a loopback/);
  });

  it("the reason goes to the debug log only", async () => {
    app.logger.lines.length = 0;
    await app.request("/v1/scrape", { method: "POST", key, json: { url: "http://db.internal/" } });
    const debug = app.logger.lines.filter((l) => l.level === "debug" && l.msg === "url_not_allowed");
    expect(debug).toHaveLength(1);
    expect(String(debug[0]!.reason)).toContain("10.0.0.7");
    expect(app.logger.lines.filter((l) => l.level !== "debug").map((l) => JSON.stringify(l)).join("\n")).not.toContain("10.0.0.7");
  });
});
