/**
 * Start and stop like a well-behaved service (issue #18), on real processes: a taken port,
 * signals through `npm start` and `deno task start`, a closed stdout, a second server on one file.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, ROOT, startServer, tempDataDir, type Runtime } from "../helpers/server.ts";

const RUNTIMES: Runtime[] = ["node", "deno", "bun"];
const BIN = join(ROOT, "node_modules", ".bin");

function serverArgs(runtime: Runtime): [string, string[]] {
  if (runtime === "node") return [process.execPath, [join(ROOT, "bin/quarry.js"), "serve"]];
  if (runtime === "deno") return [join(BIN, "deno"), ["run", "-A", join(ROOT, "adapters/deno/server.ts")]];
  return [join(BIN, "bun"), [join(ROOT, "adapters/bun/server.ts")]];
}

function exited(proc: ChildProcess, ms: number): Promise<number | null | "timeout"> {
  return new Promise((res) => {
    if (proc.exitCode !== null) return res(proc.exitCode);
    const t = setTimeout(() => res("timeout"), ms);
    proc.once("exit", (code) => {
      clearTimeout(t);
      res(code);
    });
  });
}

/** Runs a server expected to stop by itself (within 30 s, else it is killed); its exit code and output. */
async function runToExit(runtime: Runtime, env: Record<string, string>): Promise<{ code: number | null | "timeout"; stdout: string; stderr: string }> {
  const [cmd, args] = serverArgs(runtime);
  const proc = spawn(cmd, args, { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let stdout = "";
  proc.stderr!.on("data", (d) => (stderr += d));
  proc.stdout!.on("data", (d) => (stdout += d));
  const code = await exited(proc, 30_000);
  if (code === "timeout") proc.kill("SIGKILL");
  return { code, stdout, stderr };
}

function collect(proc: ChildProcess): () => string {
  let out = "";
  proc.stdout?.on("data", (d) => (out += d));
  proc.stderr?.on("data", (d) => (out += d));
  return () => out;
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

function holdPort(): Promise<{ server: NetServer; port: number }> {
  return new Promise((res) => {
    const server = createServer().listen(0, "127.0.0.1", () => res({ server, port: (server.address() as { port: number }).port }));
  });
}

const baseEnv = () => ({ ...process.env, QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0", QUARRY_DATA_DIR: tempDataDir() }) as Record<string, string>;

describe.each(RUNTIMES)("start and stop on %s", (runtime) => {
  it("a taken port prints one clear line and exits non-zero", async () => {
    const held = await holdPort();
    try {
      const { code, stdout, stderr } = await runToExit(runtime, { QUARRY_PORT: String(held.port) });
      expect(code).toBe(1);
      const lines = stderr.split("\n").filter((l) => l.trim() && !/^npm warn/i.test(l));
      expect(lines).toEqual([`quarry: cannot listen on 127.0.0.1:${held.port}: the address is already in use (is another server running? set QUARRY_PORT or --port)`]);
      // Nothing else is said on the way out: no warning from work the failed start had begun (the job watchdog).
      expect(stdout.split("\n").filter((l) => /"level":"(warn|error)"|"level":(40|50)/.test(l))).toEqual([]);
    } finally {
      held.server.close();
    }
  }, 40_000);

  // The reader of the server's stdout and stderr (like `head -1`) reads the first line and exits.
  // With no request first, the first write into the closed pipes happens during shutdown itself.
  it.each([0, 20])("closed stdout and stderr do not hold up shutdown (%i requests, then SIGTERM)", async (requests) => {
    const [cmd, args] = serverArgs(runtime);
    const reader = `
      const { spawn } = require("node:child_process");
      const p = spawn(${JSON.stringify(cmd)}, ${JSON.stringify(args)}, { cwd: ${JSON.stringify(ROOT)}, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      let buf = "";
      p.stdout.on("data", (d) => {
        buf += d;
        if (buf.includes("\\n")) {
          process.stdout.write(JSON.stringify({ pid: p.pid, url: JSON.parse(buf.split("\\n")[0]).url }));
          process.exit(0);
        }
      });`;
    const r = spawnSync(process.execPath, ["-e", reader], { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0", QUARRY_DATA_DIR: tempDataDir() }, encoding: "utf8", timeout: 30_000 });
    const { pid, url } = JSON.parse(r.stdout) as { pid: number; url: string };
    try {
      for (let i = 0; i < requests; i++) expect(await answers(url)).toBe(true);
      await new Promise((res) => setTimeout(res, 300));
      process.kill(pid, "SIGTERM");
      await waitFor(() => !alive(pid), 15_000, `pid ${pid} to exit after SIGTERM`);
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  }, 60_000);

  it("a second server on the same SQLite file is refused, naming the first; the CLI still works", async () => {
    const env = { QUARRY_DATA_DIR: tempDataDir() };
    const first = await startServer(runtime, env);
    try {
      const [cmd, args] = serverArgs(runtime);
      const second = spawn(cmd, args, { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
      const out = collect(second);
      const code = await exited(second, 30_000);
      if (code === "timeout") second.kill("SIGKILL");
      expect(code).toBe(1);
      expect(out()).toContain(`another quarry server (pid ${first.proc.pid}, ${first.url}) is using`);
      expect(await answers(first.url)).toBe(true);
      const made = cli(["keys", "create", "--account", "a", "--scopes", "search", "--name", "n", "--json"], env);
      expect(made.status).toBe(0);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    // Once the first has stopped, a new server may take the file.
    const again = await startServer(runtime, env);
    expect(await again.stop()).toBe(0);
  }, 90_000);
});

describe("signals reach the server through the package scripts", () => {
  const cases: Array<[string, string, string[]]> = [
    ["npm start", "npm", ["start", "--silent"]],
    ["deno task start", join(BIN, "deno"), ["task", "start"]],
  ];
  it.each(cases)("SIGTERM to %s stops the server", async (_name, cmd, args) => {
    const proc = spawn(cmd, args, { cwd: ROOT, env: baseEnv(), stdio: ["ignore", "pipe", "pipe"] });
    const out = collect(proc);
    await waitFor(() => /"url":"(http:[^"]+)"/.test(out()), 40_000, `${cmd} to listen:\n${out()}`);
    const url = /"url":"(http:[^"]+)"/.exec(out())![1];
    expect(await answers(url)).toBe(true);
    // No .env here: nothing warns about one (deno.json's task had `--env-file`, which warned on every start without a file).
    expect(out()).not.toMatch(/Warning|env-file/);
    proc.kill("SIGTERM");
    await exited(proc, 15_000);
    await waitFor(() => out().includes("quarry stopped"), 15_000, "the server to log its stop");
    // The stopping line names the signal (Node logged "stop" whatever it was).
    const stopping = out().split("\n").find((l) => l.includes("quarry stopping"));
    expect(JSON.parse(stopping!).signal).toBe("SIGTERM");
    expect(await answers(url)).toBe(false);
  }, 90_000);
});

describe("a taken port with PostgreSQL", () => {
  it("prints the one line too: the job workers the abandoned start had begun do not log an error", async () => {
    const { tempDatabase } = await import("../helpers/pg.ts");
    const db = await tempDatabase("takenport");
    const held = await holdPort();
    try {
      const { code, stdout, stderr } = await runToExit("node", { QUARRY_DATABASE_URL: db.url, QUARRY_PORT: String(held.port) });
      expect(code).toBe(1);
      expect(stderr.split("\n").filter((l) => l.trim())).toEqual([`quarry: cannot listen on 127.0.0.1:${held.port}: the address is already in use (is another server running? set QUARRY_PORT or --port)`]);
      expect(stdout.split("\n").filter((l) => /"level":"(warn|error)"|"level":(40|50)/.test(l))).toEqual([]);
    } finally {
      held.server.close();
      await db.drop();
    }
  }, 40_000);
});

describe("a request still running after the 10 s grace", () => {
  it("is named in the stop's warning (it gets no log line of its own), and the server still exits 0", async () => {
    const { createServer: httpServer } = await import("node:http");
    const { createKeyCli } = await import("../helpers/server.ts");
    const hang = httpServer(() => {}); // accepts, never answers
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    const port = (hang.address() as { port: number }).port;
    try {
      const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_EGRESS_ALLOW: "127.0.0.1/32" };
      const { key } = createKeyCli(env, "acme", "scrape");
      const server = await startServer("node", env);
      const pending = fetch(`${server.url}/v1/scrape`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `http://127.0.0.1:${port}/never`, timeout_ms: 60_000 }),
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, 500));
      const t0 = Date.now();
      expect(await server.stop("SIGTERM")).toBe(0);
      expect(Date.now() - t0).toBeLessThan(14_000);
      await pending;
      const warning = server.output().split("\n").find((l) => l.includes("did not finish within 10 s"));
      expect(warning).toBeDefined();
      const fields = JSON.parse(warning!);
      expect(fields.requests).toBe(1);
      expect(fields.cut[0]).toMatchObject({ method: "POST", path: "/v1/scrape", req_id: expect.stringMatching(/^req_/) });
      expect(fields.cut[0].running_ms).toBeGreaterThanOrEqual(10_000);
    } finally {
      hang.closeAllConnections();
      hang.close();
    }
  }, 40_000);
});
