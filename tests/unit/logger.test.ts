/**
 * The servers' logger: secrets are censored whatever path a caller put them on (pino's path
 * redaction was replaced by a hand check, which costs nothing on the lines that hold none), and
 * lines written together still all arrive, in order, by flush().
 */
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger, FdDestination, REDACTED, redactSecrets } from "../../adapters/shared/logger.ts";

const SECRET = "qry_" + "ab".repeat(32);

/** A line sink that keeps what it is given. */
const capture = () => {
  const lines: string[] = [];
  return { lines, write: (l: string) => (lines.push(l), true) };
};

/** createLogger and, beside it, pino as createLogger configures it but writing every line itself, each into its own sink. */
async function beside() {
  const pino = (await import("pino")).default;
  const ours = capture();
  const theirs = capture();
  const logger = createLogger("info", ours as never);
  const reference = pino({ level: "info", base: undefined, timestamp: () => "", formatters: { log: redactSecrets } }, theirs as never);
  return { ours, theirs, logger, reference };
}

describe("redactSecrets", () => {
  it("censors authorization, key and secret at the top, key and secret one level down, and the two header paths", () => {
    const given = {
      authorization: `Bearer ${SECRET}`, key: SECRET, secret: SECRET, key_id: "key_1",
      body: { key: SECRET, secret: SECRET, name: "n" },
      headers: { authorization: `Bearer ${SECRET}`, accept: "*/*" },
      req: { headers: { authorization: `Bearer ${SECRET}`, host: "h" }, method: "GET" },
      list: [SECRET.length],
    };
    const out = redactSecrets(given);
    expect(out).toEqual({
      authorization: REDACTED, key: REDACTED, secret: REDACTED, key_id: "key_1",
      body: { key: REDACTED, secret: REDACTED, name: "n" },
      headers: { authorization: REDACTED, accept: "*/*" },
      req: { headers: { authorization: REDACTED, host: "h" }, method: "GET" },
      list: [68],
    });
    expect(JSON.stringify(out)).not.toContain(SECRET);
    // The caller's object is left as it was.
    expect(given.body.key).toBe(SECRET);
    expect(given.req.headers.authorization).toContain(SECRET);
  });

  it("hands back the same object when it holds no secret", () => {
    const line = { req_id: "req_1", method: "GET", path: "/v1/usage", status: 200, key_id: "key_1", account: "acme" };
    expect(redactSecrets(line)).toBe(line);
  });
});

describe("createLogger over an FdDestination", () => {
  it("writes every line, redacted and in order, by flush()", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "quarry-log-")), "out.log");
    const out = new FdDestination(openSync(file, "w"));
    const logger = createLogger("info", out as never);
    for (let i = 0; i < 500; i++) logger.info({ n: i, key: SECRET }, "line");
    await out.flush();
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.n)).toEqual([...Array(500).keys()]);
    expect(lines.every((l) => l.key === REDACTED && l.msg === "line")).toBe(true);
  });
});

describe("createLogger's own writing of flat lines", () => {
  it("writes the same JSON pino writes, and leaves errors, nested objects and secrets to pino", async () => {
    const { ours, theirs, logger, reference } = await beside();
    const objects: object[] = [
      { req_id: "req_1", method: "GET", path: "/v1/usage", status: 200, duration_ms: 0.4, key_id: "key_1", account: "acme" },
      { path: '/a"b\\c\n', n: NaN, inf: -Infinity, yes: true, no: false, gone: undefined, lone: "\ud800x", unicode: "é✓" },
      { msg: "inside" },
      {},
      { err: new Error("boom") },
      { nested: { a: 1 } },
      { key: SECRET, other: "x" },
      { list: [1, 2] },
    ];
    for (const o of objects) {
      logger.info(o, "line %s");
      reference.info(o, "line %s");
      logger.info(o);
      reference.info(o);
      logger.debug(o, "not written");
    }
    const strip = (l: string) => JSON.parse(l.replace(/,"time":"[^"]*"/, ""));
    expect(ours.lines.length).toBe(theirs.lines.length);
    expect(ours.lines.map(strip)).toEqual(theirs.lines.map(strip));
    expect(ours.lines.every((l) => /^\{"level":30,"time":"\d{4}-\d\d-\d\dT[\d:.]+Z"[,}]/.test(l) && l.endsWith("}\n"))).toBe(true);
    expect(ours.lines.join("")).not.toContain(SECRET);
  });
});

describe("createLogger's line for a request (the gateway's, issue #33)", () => {
  it("writes, byte for byte, what pino writes for the same members in the gateway's order, and nothing below info", async () => {
    const { ours, theirs, logger, reference } = await beside();
    type Args = [string, string, string, string | undefined, number, number, string | undefined, string | undefined, boolean];
    const cases: Args[] = [
      ["req_01", "GET", "/v1/usage", undefined, 200, 0.4, "key_01", "acme", false],
      ["req_02", "POST", "/v1/scrape", "/v2/scrape", 503, 12, "key_02", 'a"b\\c\n\ud800é', true],
      ["req_03", "GET", '/x"y\u0001', undefined, 404, NaN, undefined, undefined, false],
      ["req_04", "HEAD", "/health", undefined, 200, Infinity, undefined, undefined, true],
    ];
    for (const [id, method, path, via, status, ms, keyId, account, gone] of cases) {
      logger.request!(id, method, path, via, status, ms, keyId, account, gone);
      // The object as the gateway built it before: field by field, in this order.
      const line: Record<string, unknown> = { req_id: id, method, path };
      if (via !== undefined) line.via = via;
      line.status = status;
      line.duration_ms = ms;
      if (keyId !== undefined) line.key_id = keyId;
      if (account !== undefined) line.account = account;
      if (gone) line.client_gone = true;
      reference.info(line, "request");
    }
    const strip = (l: string) => l.replace(/,"time":"[^"]*"/, "");
    expect(ours.lines.map(strip)).toEqual(theirs.lines.map(strip));
    expect(ours.lines.every((l) => /^\{"level":30,"time":"\d{4}-\d\d-\d\dT[\d:.]+Z",/.test(l))).toBe(true);
    const quiet = capture();
    createLogger("warn", quiet as never).request!("req_05", "GET", "/", undefined, 200, 1, undefined, undefined, false);
    expect(quiet.lines).toEqual([]);
  });
});
