/**
 * A request whose client has gone (closed the connection) before its answer is ready is not
 * charged: no answer left, so nothing was delivered. A scrape of a page that takes 1.5 s, with
 * a client that gives up after 0.3 s, used to count a unit of the month all the same. Real
 * servers on Node, Deno and Bun; a local page server that answers slowly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPageServer, type PageServer } from "../helpers/page-server.ts";
import { createKeyCli, startServer, tempDataDir, type Runtime, type Server } from "../helpers/server.ts";

const RUNTIMES: Runtime[] = ["node", "deno", "bun"];
const PAGE = "<html><head><title>slow</title></head><body><article><p>A page that takes its time to answer, with words enough to be read as content.</p></article></body></html>";

describe.each(RUNTIMES)("a client that gives up, on %s", (runtime) => {
  let site: PageServer;
  let server: Server;
  let key: string;
  let answered = 0;
  /** The server's log from after the warm-up scrape. */
  let warmed = 0;
  const output = () => server.output().slice(warmed);

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/slow", (_req, res) => {
      setTimeout(() => {
        answered++;
        res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
      }, 1_500);
    });
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off", QUARRY_EGRESS_ALLOW: "127.0.0.1/32" };
    site.route("/warm", (_req, res) => void res.writeHead(200, { "content-type": "text/html" }).end(PAGE));
    server = await startServer(runtime, env);
    key = createKeyCli(env, "acme", "scrape").key;
    // The first scrape loads the HTML libraries: done here, with another account's key, so the
    // client below gives up while the page is being fetched, not before the server got to it.
    const warm = createKeyCli(env, "warmup", "scrape").key;
    const first = await fetch(`${server.url}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${warm}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${site.url}/warm`, formats: ["text"] }) });
    expect(first.status).toBe(200);
    for (const until = Date.now() + 20_000; !server.output().includes('"path":"/v1/scrape"') && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    warmed = server.output().length;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await site?.close();
  });

  const scrape = (signal?: AbortSignal) =>
    fetch(`${server.url}/v1/scrape`, {
      method: "POST",
      signal,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${site.url}/slow`, formats: ["text"] }),
    });
  const used = async () => (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()).used;

  it("is not charged for the answer it never got; one that waits is", async () => {
    await expect(scrape(AbortSignal.timeout(300))).rejects.toThrow();
    // Until the page has answered and the server has finished the work it no longer owes anyone.
    await expect.poll(() => answered, { timeout: 15_000 }).toBe(1);
    // Its log line is written once the gateway has settled its reservation (a loaded machine can
    // take seconds more to extract the page: a fixed wait of 0.5 s was not always enough).
    await expect.poll(() => output().includes('"path":"/v1/scrape"'), { timeout: 20_000 }).toBe(true);
    expect(await used()).toBe(0);
    // The log line says the answer never left, so it can be matched with the usage it did not add.
    const scrapes = output().split("\n").filter((l) => l.includes('"path":"/v1/scrape"'));
    expect(scrapes).toHaveLength(1);
    expect(JSON.parse(scrapes[0]!)).toMatchObject({ client_gone: true });

    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("999");
    expect(await used()).toBe(1);
    const scrapeLines = () => output().split("\n").filter((l) => l.includes('"path":"/v1/scrape"'));
    await expect.poll(() => scrapeLines().length, { timeout: 5_000 }).toBe(2);
    const last = scrapeLines().at(-1)!;
    expect(JSON.parse(last).client_gone).toBeUndefined();
  }, 30_000);
});
