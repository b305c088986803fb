/**
 * Private PostgreSQL and Redis servers for suites that stop and restart them, so the shared
 * servers other suites use in parallel are never touched. Both listen on 127.0.0.1 only.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { onCleanup, tempDir } from "./temp.ts";

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
    s.on("error", rej);
  });
}

const pgBin = (tool: string) => join("/usr/lib/postgresql", readdirSync("/usr/lib/postgresql").sort().pop()!, "bin", tool);
const asPostgres = (args: string[]) => (process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", ...args]] : [args[0], args.slice(1)]) as [string, string[]];

export class PrivatePostgres {
  private constructor(readonly dir: string, readonly port: number) {}

  get url() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    // Its data folder (~40 MB) goes after the file, once the server is surely stopped.
    const dir = tempDir("quarry-pg-");
    if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync("id", ["-u", "postgres"]).toString().trim()), Number(execFileSync("id", ["-g", "postgres"]).toString().trim()));
    const [cmd, args] = asPostgres([pgBin("initdb"), "-D", join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"]);
    execFileSync(cmd, args, { stdio: "ignore" });
    const pg = new PrivatePostgres(dir, await freePort());
    onCleanup(() => pg.stopIfRunning());
    pg.up();
    return pg;
  }

  up() {
    const [cmd, args] = asPostgres([pgBin("pg_ctl"), "-D", join(this.dir, "data"), "-l", join(this.dir, "log"), "-w", "-o", `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "start"]);
    execFileSync(cmd, args, { stdio: "ignore" });
  }

  down() {
    const [cmd, args] = asPostgres([pgBin("pg_ctl"), "-D", join(this.dir, "data"), "-w", "-m", "fast", "stop"]);
    execFileSync(cmd, args, { stdio: "ignore" });
  }

  /** For cleanup: an immediate stop whatever state the suite left it in. */
  stopIfRunning() {
    const [cmd, args] = asPostgres([pgBin("pg_ctl"), "-D", join(this.dir, "data"), "-w", "-m", "immediate", "stop"]);
    try {
      execFileSync(cmd, args, { stdio: "ignore" });
    } catch {
      // not running
    }
  }
}

export class PrivateRedis {
  private proc: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    onCleanup(() => r.down());
    await r.up();
    return r;
  }

  async up() {
    this.proc = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    for (let i = 0; i < 50; i++) {
      try {
        execFileSync("redis-cli", ["-p", String(this.port), "ping"], { stdio: "ignore" });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error("private Redis did not start");
  }

  /** Stops Redis without saving: it comes back empty, as a restarted cache-only Redis does. */
  async down() {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return; // already gone (a kill leaves exitCode null)
    await new Promise<void>((res) => {
      p.once("exit", () => res());
      p.kill("SIGKILL");
    });
  }
}
