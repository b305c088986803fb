/**
 * `quarry demo` as a newcomer without internet meets it: a real process, its printed key, and
 * every operation answering from the recorded upstreams; SIGTERM stops it cleanly.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { ROOT, tempDataDir } from "../helpers/server.ts";

describe("quarry demo", () => {
  it("serves search, video, social and research offline with a printed key, and cleans up on SIGTERM", async () => {
    const child = spawn(process.execPath, ["bin/quarry.js", "demo"], { cwd: ROOT, env: { ...process.env, QUARRY_PORT: "0", QUARRY_LOG_LEVEL: "silent" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    try {
      for (let i = 0; i < 200 && !/export QUARRY_KEY=qry_/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      const url = /Quarry demo at (http:\/\/[\d.]+:\d+)/.exec(out)?.[1];
      const key = /QUARRY_KEY=(qry_[0-9a-f]{64})/.exec(out)?.[1];
      expect(url, out).toBeDefined();
      expect(key).toBeDefined();
      const call = async (path: string, body: unknown) => {
        const res = await fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
        expect(res.status, path).toBe(200);
        return res.json();
      };
      expect((await call("/v1/search", { query: "blue tack" })).results.length).toBeGreaterThan(0);
      const video = await call("/v1/video/search", { query: "test video" });
      expect(video.results.some((r: { transcript_snippet: string | null }) => r.transcript_snippet)).toBe(true);
      expect((await call("/v1/social/research", { query: "apple" })).sources.length).toBeGreaterThan(0);
      expect((await call("/v1/research", { query: "blue tack", tier: "basic" })).report.findings.length).toBeGreaterThan(0);
    } finally {
      child.kill("SIGTERM");
      const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      expect(code).toBe(0);
    }
  }, 60_000);

  it("on a port that is taken it exits 1 with one line and leaves no throwaway data behind", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as { port: number }).port;
    const tmp = tempDataDir();
    try {
      const child = spawn(process.execPath, ["bin/quarry.js", "demo"], { cwd: ROOT, env: { ...process.env, QUARRY_PORT: String(port), TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      clearTimeout(timer);
      expect(code).toBe(1);
      expect(stderr).toBe(`quarry: cannot listen on 127.0.0.1:${port}: the address is already in use (is another server running? set QUARRY_PORT or --port)\n`);
      expect(readdirSync(tmp).filter((f) => f.startsWith("quarry-demo-"))).toEqual([]);
    } finally {
      taken.close();
    }
  }, 30_000);
});
