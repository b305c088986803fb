/**
 * A real server whose search finds three local pages through a replayed SearXNG (the other
 * engines fail): /article reads, /gone answers 503, /picture is a PNG. For the tests of what
 * search and research say about pages they could not read.
 */
import { searxngBody } from "../research/fixtures.ts";
import { send, startPageServer, type PageServer } from "./page-server.ts";
import { startReplayedQuarry } from "./replayed-quarry.ts";
import type { Server } from "./server.ts";

export interface UnreadPagesRig {
  server: Server;
  site: PageServer;
  /** An enterprise key with `scope`. */
  key: string;
  close(): Promise<void>;
}

/** `titles` and `snippets` are the three results' (article, gone, picture), as the engine lists them. */
export async function startUnreadPagesRig(opts: { article: string; query: string; titles: [string, string, string]; snippets: [string, string, string]; scope: string }): Promise<UnreadPagesRig> {
  const { server, replay, key, close } = await startReplayedQuarry(opts.scope, { QUARRY_EGRESS_ALLOW: "127.0.0.1/32" });
  const site = await startPageServer();
  site.route("/article", send("text/html; charset=utf-8", opts.article));
  site.route("/gone", send("text/html", "<h1>Server error</h1>", 503));
  site.route("/picture", send("image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47])));
  // The replay server reads its faults and bodies per request: set after the server started.
  Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
  replay.bodies.searxng = searxngBody(opts.query, ["/article", "/gone", "/picture"].map((path, i) => ({ url: `${site.url}${path}`, title: opts.titles[i]!, content: opts.snippets[i]! })));
  return {
    server,
    site,
    key,
    close: async () => {
      await close();
      await site.close();
    },
  };
}
