/**
 * Run by runtimes.test.ts under Deno and Bun (`deno run -A` / `bun`): the same guarantees, checked
 * on the runtime itself. Prints one JSON line per check: {check, ok, detail}. Local servers only.
 */
import { gzipSync } from "node:zlib";
import { createSafeFetchPortable, detectPinMode } from "../../adapters/fetch/portable.ts";
import { createSafeFetch } from "../../adapters/fetch/safe-fetch.ts";
import type { SafeFetch } from "../../adapters/fetch/types.ts";
import { parseAllowList } from "../../core/net/allow-list.ts";
import { BodyTooLarge, EgressRefused } from "../../core/net/fetch-errors.ts";
import { makeCertificates, mapResolver, startServer } from "./helpers.ts";

const results: { check: string; ok: boolean; detail?: string }[] = [];
const record = (check: string, ok: boolean, detail?: string) => results.push({ check, ok, ...(detail ? { detail } : {}) });

async function refused(check: string, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
    record(check, false, "not refused");
  } catch (err) {
    record(check, err instanceof EgressRefused, `${(err as Error).name}: ${(err as Error).message}`);
  }
}

const bomb = gzipSync(Buffer.alloc(30 * 1024 * 1024));
const victim = await startServer("127.0.0.1", (_req, res) => res.end("secret"));
const victim6 = await startServer("::1", (_req, res) => res.end("secret"));
const site = await startServer("127.0.0.1", (req, res) => {
  if (req.url === "/bomb") {
    res.writeHead(200, { "content-encoding": "gzip" });
    return res.end(bomb);
  }
  if (req.url?.startsWith("/to?u=")) {
    res.writeHead(302, { location: decodeURIComponent(req.url.slice(6)) });
    return res.end();
  }
  res.end(JSON.stringify({ host: req.headers.host, ua: req.headers["user-agent"] }));
});
const resolver = mapResolver({ "allowed.test": ["127.0.0.1"], "evil.test": ["127.0.0.1"], "pinned.test": ["127.0.0.1"], "mixed.test": ["8.8.8.8", "::1"] });
const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

const fetchers: [string, (allow: string) => SafeFetch][] = [
  ["node:http", (allow) => createSafeFetch({ allow: parseAllowList(allow), resolver, maxBytes: 1024 * 1024 })],
  ["portable", (allow) => createSafeFetchPortable({ allow: parseAllowList(allow), resolver, maxBytes: 1024 * 1024 })],
];

for (const [name, make] of fetchers) {
  const none = make("");
  for (const url of [
    `http://127.0.0.1:${victim.port}/`,
    `http://2130706433:${victim.port}/`,
    `http://0x7f.1:${victim.port}/`,
    `http://[::ffff:7f00:1]:${victim.port}/`,
    `http://[::1]:${victim6.port}/`,
    `http://0.0.0.0:${victim.port}/`,
    `http://localhost:${victim.port}/`,
    `http://evil.test:${victim.port}/`,
    `https://evil.test:${victim.port}/`,
    `http://mixed.test:${victim6.port}/`,
    "file:///etc/passwd",
  ]) {
    await refused(`${name} refuses ${url}`, () => none.fetchPage(url));
  }
  const byCidr = make("127.0.0.1/32");
  await refused(`${name} refuses a redirect to ::1`, () => byCidr.fetchPage(`${site.origin}/to?u=${encodeURIComponent(`http://[::1]:${victim6.port}/`)}`));
  try {
    const page = await byCidr.fetchPage(`${site.origin}/`);
    record(`${name} fetches an allowed page with the honest UA`, /^QuarryBot\//.test(json(page.body).ua));
  } catch (err) {
    record(`${name} fetches an allowed page with the honest UA`, false, String(err));
  }
  try {
    await byCidr.fetchPage(`${site.origin}/bomb`);
    record(`${name} stops a gzip bomb`, false, "no error");
  } catch (err) {
    const seen = (err as BodyTooLarge).bytesSeen;
    record(`${name} stops a gzip bomb`, err instanceof BodyTooLarge && seen < 2 * 1024 * 1024, `${(err as Error).name} after ${seen} bytes`);
  }
}

// Connect-time check on this runtime's node:http: the system cannot resolve allowed.test, so a
// successful fetch proves the socket used the guarded lookup's (checked) answer.
try {
  const page = await createSafeFetch({ allow: parseAllowList("allowed.test"), resolver }).fetchPage(`http://allowed.test:${site.port}/`);
  record("node:http connects to the looked-up address", json(page.body).host === `allowed.test:${site.port}`, page.remoteAddress);
} catch (err) {
  record("node:http connects to the looked-up address", false, String(err));
}

// Pinning: pinned.test resolves (for us only) to an allowed address; a pinned fetch reaches it.
const mode = detectPinMode();
try {
  const page = await createSafeFetchPortable({ allow: parseAllowList("127.0.0.1/32"), resolver }).fetchPage(`http://pinned.test:${site.port}/`);
  record(`portable pins http (${mode})`, mode !== "none" && json(page.body).host === `pinned.test:${site.port}`, page.remoteAddress);
} catch (err) {
  record(`portable pins http (${mode})`, mode === "none", `${(err as Error).name}: ${(err as Error).message}`);
}

// TLS: node:https with the guarded lookup; the portable fetcher pinned by serverName (Bun only).
{
  const tls = makeCertificates();
  const secure = await startServer("127.0.0.1", (req, res) => {
    res.end(JSON.stringify({ host: req.headers.host, sni: (req.socket as { servername?: string }).servername ?? null }));
  }, { key: tls.key, cert: tls.cert });
  try {
    const page = await createSafeFetch({ allow: parseAllowList("allowed.test"), resolver, ca: tls.ca }).fetchPage(`https://allowed.test:${secure.port}/`);
    record("node:https connects to the looked-up address with SNI", json(page.body).sni === "allowed.test");
  } catch (err) {
    record("node:https connects to the looked-up address with SNI", false, String(err));
  }
  await refused("node:https refuses a name resolving to loopback", () =>
    createSafeFetch({ allow: parseAllowList(""), resolver, ca: tls.ca }).fetchPage(`https://evil.test:${secure.port}/`),
  );
  try {
    const page = await createSafeFetchPortable({ allow: parseAllowList("127.0.0.1/32"), resolver, ca: tls.ca }).fetchPage(`https://pinned.test:${secure.port}/`);
    const body = json(page.body);
    record(`portable pins https (${mode})`, mode === "bun" && body.sni === "pinned.test" && body.host === `pinned.test:${secure.port}`);
  } catch (err) {
    // Deno's fetch cannot set SNI, so https is not pinned there and pinned.test does not resolve.
    record(`portable pins https (${mode})`, mode !== "bun", `${(err as Error).name}: ${(err as Error).message}`);
  }
  await secure.close();
}

const untouched = victim.connections + victim6.connections === 0;
record("no forbidden server saw a connection", untouched, `${victim.connections}/${victim6.connections}`);
for (const r of results) console.log(JSON.stringify(r));
await Promise.all([victim.close(), victim6.close(), site.close()]);
// Deno keeps the process alive on pending handles less often than Bun; exit explicitly.
(globalThis as { process?: { exit(code: number): void } }).process?.exit(0);
