/**
 * Which fetch failures say a host cannot be reached (siteUnreachable, what stops a crawl with
 * site_unreachable), through the real guarded fetcher against real local sockets: a refused or
 * reset connection, a name that does not resolve and a fetch that times out do; a server that
 * answers garbage, or a body cut short after an answer began, do not (the host answered).
 */
import { createServer as createNet, type Server as NetServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { siteUnreachable } from "../../core/net/fetch-errors.ts";

let server: NetServer;
let port = 0;
let closedPort = 0;

beforeAll(async () => {
  // One raw TCP server; the path decides what it does with the request.
  server = createNet((socket) => {
    socket.once("data", (d) => {
      const path = d.toString().split(" ")[1];
      if (path === "/reset") return void socket.resetAndDestroy();
      if (path === "/garbage") return void socket.end("this is not HTTP\r\n\r\n");
      if (path === "/hang") return; // never answers
      if (path === "/cut") return void socket.end("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 1000\r\n\r\n<html>");
      socket.end("HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as { port: number }).port;
  const probe = createNet().listen(0, "127.0.0.1");
  await new Promise((r) => probe.once("listening", r));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
});
afterAll(async () => {
  server.close();
});

const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: async (h) => (h === "gone.test" ? [] : ["127.0.0.1"]) });

async function failure(url: string): Promise<unknown> {
  try {
    const page = await pages.fetchPage(url, { timeoutMs: 1000 });
    return { status: page.status };
  } catch (err) {
    return err;
  }
}

describe("siteUnreachable, on real fetch failures", () => {
  it("a refused connection, a reset, a name that does not resolve, a timeout: unreachable", async () => {
    for (const url of [`http://127.0.0.1:${closedPort}/`, `http://127.0.0.1:${port}/reset`, `http://gone.test:${port}/`, `http://127.0.0.1:${port}/hang`]) {
      const err = await failure(url);
      expect(err, url).toBeInstanceOf(Error);
      expect(siteUnreachable(err), `${url}: ${String(err)}`).toBe(true);
    }
  });

  it("an HTTP error answer, garbage instead of HTTP, a body cut short: the host answered", async () => {
    expect(await failure(`http://127.0.0.1:${port}/500`)).toEqual({ status: 500 });
    for (const url of [`http://127.0.0.1:${port}/garbage`, `http://127.0.0.1:${port}/cut`]) {
      const err = await failure(url);
      expect(err, url).toBeInstanceOf(Error);
      expect(siteUnreachable(err), `${url}: ${String(err)}`).toBe(false);
    }
  });
});
