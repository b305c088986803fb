/** Starts real `quarry` server processes (Node, Deno or Bun) and runs the real CLI, for black-box tests. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { onCleanup, tempDir } from "./temp.ts";

export const ROOT = resolve(new URL("../..", import.meta.url).pathname);
export type Runtime = "node" | "deno" | "bun";

const BIN = join(ROOT, "node_modules", ".bin");

export function command(runtime: Runtime): [string, string[]] {
  switch (runtime) {
    case "node":
      return [process.execPath, [join(ROOT, "bin/quarry.js"), "serve"]];
    case "deno":
      return [join(BIN, "deno"), ["run", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-ffi", "--allow-sys", join(ROOT, "adapters/deno/server.ts")]];
    case "bun":
      return [join(BIN, "bun"), [join(ROOT, "adapters/bun/server.ts")]];
  }
}

export interface Server {
  url: string;
  proc: ChildProcess;
  env: Record<string, string>;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function tempDataDir(): string {
  return tempDir("quarry-e2e-");
}

/** `fileLimit`: the server runs under `ulimit -n` of that many open files (a shell execs it, so its pid is the server's). */
export async function startServer(runtime: Runtime, env: Record<string, string>, options: { fileLimit?: number } = {}): Promise<Server> {
  let [cmd, args] = command(runtime);
  if (options.fileLimit) [cmd, args] = ["/bin/sh", ["-c", `ulimit -n ${options.fileLimit} && exec "$0" "$@"`, cmd, ...args]];
  const fullEnv = { ...process.env, QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0", QUARRY_LOG_LEVEL: "info", ...env } as Record<string, string>;
  const proc = spawn(cmd, args, { cwd: ROOT, env: fullEnv, stdio: ["ignore", "pipe", "pipe"] });
  // A test that fails before stopping its server must not leave it running.
  onCleanup(() => void (proc.exitCode === null && proc.signalCode === null && proc.kill("SIGKILL")));
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${runtime} server did not start:\n${out}`)), 30_000);
    const check = () => {
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    };
    proc.stdout!.on("data", check);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`${runtime} server exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    proc,
    env: fullEnv,
    output: () => out,
    stop: (signal = "SIGTERM") =>
      new Promise((res) => {
        // A process killed by a signal has exitCode null: without the signalCode check, stopping
        // a server a test had SIGKILLed waited for an exit that had already happened.
        if (proc.exitCode !== null || proc.signalCode !== null) return res(proc.exitCode);
        proc.once("exit", (code) => res(code));
        proc.kill(signal);
      }),
  };
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], env: Record<string, string>, cwd = ROOT): CliResult {
  const r = spawnSync(process.execPath, [join(ROOT, "bin/quarry.js"), ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function createKeyCli(env: Record<string, string>, account: string, scopes: string, plan?: string): { id: string; key: string } {
  const r = cli(["keys", "create", "--account", account, "--scopes", scopes, "--name", `${account}-${scopes}`, ...(plan ? ["--plan", plan] : []), "--json"], env);
  if (r.status !== 0) throw new Error(`keys create failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
