/** pino, one JSON line per event, with secrets redacted even if a caller passes one by mistake. */
import { fstatSync, write as fsWrite, writeSync } from "node:fs";
import pino from "pino";
import type { Logger } from "../../core/ports.ts";

/** Lines waiting for a slow reader beyond this are dropped rather than held in memory. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** Lines are written together: at most this long after the first one waiting, or once this many bytes wait. */
const BATCH_MS = 10;
const BATCH_BYTES = 64 * 1024;

/**
 * Writes log lines to a file descriptor without ever blocking the process or its exit.
 * pino's default stdout stream flushes synchronously when the process exits; with a closed
 * pipe (`quarry serve | head -1`) that left the server hanging after SIGTERM. Here a closed
 * pipe just stops logging, a stalled reader costs dropped lines, and exit waits for nobody.
 */
export class FdDestination {
  private queue: string[] = [];
  private queuedBytes = 0;
  private writing = false;
  private broken = false;
  private idle: Array<() => void> = [];
  dropped = 0;

  /**
   * A regular file takes a write at once (the page cache), never EAGAIN: its batches are written
   * synchronously, one system call per batch, not through the thread pool (on Bun an async
   * fs.write cost more CPU than the lines it wrote, issue #33). A pipe or a terminal, whose reader
   * may stall, is written asynchronously.
   */
  private readonly file: boolean;

  constructor(private readonly fd: number) {
    let file = false;
    try {
      file = fstatSync(fd).isFile();
    } catch {
      // not one we can look at: treated as a pipe
    }
    this.file = file;
  }

  write(line: string): boolean {
    if (this.broken) return true;
    if (this.queuedBytes + line.length > MAX_QUEUED_BYTES) {
      this.dropped++;
      return true;
    }
    this.queue.push(line);
    this.queuedBytes += line.length;
    // Lines go out together, at most BATCH_MS after the first of them or once BATCH_BYTES wait:
    // a write per line cost a system call and a thread-pool round trip per request (on Bun, a
    // traced fs.write: a tenth of a request's CPU).
    if (!this.writing && (this.queuedBytes >= BATCH_BYTES || !this.timer)) {
      if (this.queuedBytes >= BATCH_BYTES) this.writeNow();
      else (this.timer = setTimeout(() => this.writeNow(), BATCH_MS)).unref?.();
    }
    return true;
  }

  private timer: ReturnType<typeof setTimeout> | null = null;

  private writeNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.writing) this.next();
  }

  /** What is still queued, written at once (process exit): lines a pipe cannot take now are dropped. */
  writeSyncQueued(): void {
    if (this.writing || this.broken || !this.queue.length) return;
    const chunk = this.queue.join("");
    this.queue = [];
    this.queuedBytes = 0;
    try {
      writeSync(this.fd, chunk);
    } catch {
      // EAGAIN on a full pipe, EPIPE on a closed one: nothing more to do on the way out.
    }
  }

  private next(): void {
    if (this.broken || !this.queue.length) {
      this.writing = false;
      for (const done of this.idle.splice(0)) done();
      return;
    }
    const chunk = this.queue.join("");
    this.queue = [];
    this.queuedBytes = 0;
    if (this.file) return this.writeFile(chunk);
    this.writing = true;
    this.send(Buffer.from(chunk));
  }

  /**
   * A batch written as its string, encoded by the write itself rather than copied into a Buffer
   * first (issue #33: a copy of every line). A file takes it whole; a short write (a full disk)
   * writes the rest from its bytes.
   */
  private writeFile(chunk: string): void {
    try {
      const wrote = writeSync(this.fd, chunk);
      if (wrote < Buffer.byteLength(chunk)) {
        const buf = Buffer.from(chunk);
        for (let at = wrote; at < buf.length; ) at += writeSync(this.fd, buf, at, buf.length - at);
      }
    } catch {
      // ENOSPC, EBADF, EIO: logging ends, as for a broken pipe.
      this.broken = true;
    }
    for (const done of this.idle.splice(0)) done();
  }

  private send(buf: Buffer): void {
    fsWrite(this.fd, buf, 0, buf.length, null, (err, written) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // A non-blocking pipe that is full: try again shortly; anything else (EPIPE, EBADF) ends logging.
        if (code === "EAGAIN" || code === "EWOULDBLOCK") {
          setTimeout(() => this.send(buf), 20).unref?.();
          return;
        }
        this.broken = true;
        this.queue = [];
        this.queuedBytes = 0;
        return this.next();
      }
      if (written < buf.length) return this.send(buf.subarray(written));
      this.next();
    });
  }

  flush(ms = 1000): Promise<void> {
    if (this.timer) this.writeNow();
    if (!this.writing) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

export const REDACTED = "[redacted]";
const SECRET = new Set(["authorization", "key", "secret"]);

/**
 * A log object with secrets censored, even if a caller passed one by mistake: `authorization`,
 * `key` and `secret` at the top, `key` and `secret` one level down, `headers.authorization` and
 * `req.headers.authorization`. The object is copied only when it holds one. Checked by hand: pino's
 * path redaction cost a twentieth of a request's CPU on every line, for lines that nearly never
 * hold a secret.
 */
export function redactSecrets(obj: Record<string, unknown>): Record<string, unknown> {
  let out = obj;
  const censor = (k: string, value: unknown) => {
    if (out === obj) out = { ...obj };
    out[k] = value;
  };
  for (const k in obj) {
    const v = obj[k];
    if (SECRET.has(k)) {
      if (v !== undefined) censor(k, REDACTED);
    } else if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const inner = v as Record<string, unknown>;
      const headers = k === "req" ? (inner.headers as Record<string, unknown> | undefined) : undefined;
      const nested = inner.key !== undefined || inner.secret !== undefined || (k === "headers" && inner.authorization !== undefined) ||
        (headers !== null && typeof headers === "object" && headers.authorization !== undefined);
      if (!nested) continue;
      const copy: Record<string, unknown> = { ...inner };
      if (copy.key !== undefined) copy.key = REDACTED;
      if (copy.secret !== undefined) copy.secret = REDACTED;
      if (k === "headers" && copy.authorization !== undefined) copy.authorization = REDACTED;
      if (k === "req" && headers !== null && typeof headers === "object" && headers.authorization !== undefined) copy.headers = { ...headers, authorization: REDACTED };
      censor(k, copy);
    }
  }
  return out;
}

/** pino's isoTime, formatted once per millisecond: under load many lines share one. */
let lastTime = { ms: -1, text: "" };
function isoTime(): string {
  const ms = Date.now();
  if (ms !== lastTime.ms) lastTime = { ms, text: `,"time":"${new Date(ms).toISOString()}"` };
  return lastTime.text;
}

/** A string as a JSON value: quoted as it is when nothing in it needs escaping (the usual case), else JSON.stringify's. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * The members of a log object as pino writes them (`,"k":v` for each own value, undefined left
 * out, a number that is not finite as null), or null when the object is not a plain one of strings,
 * numbers and booleans without a secret's name: those go through pino itself.
 */
/** `,"key":` for the few keys log lines use, made once each. */
const memberPrefixes = new Map<string, string>();
function memberPrefix(k: string): string {
  let p = memberPrefixes.get(k);
  if (p === undefined) {
    p = `,${jsonString(k)}:`;
    if (memberPrefixes.size < 1000) memberPrefixes.set(k, p);
  }
  return p;
}

function flatMembers(obj: object): string | null {
  if (Object.getPrototypeOf(obj) !== Object.prototype) return null;
  let out = "";
  const o = obj as Record<string, unknown>;
  for (const k in o) {
    const v = o[k];
    if (v === undefined) continue;
    if (SECRET.has(k) || k === "err") return null;
    const t = typeof v;
    if (t === "string") out += memberPrefix(k) + jsonString(v as string);
    else if (t === "number") out += memberPrefix(k) + (Number.isFinite(v) ? String(v) : "null");
    else if (t === "boolean") out += memberPrefix(k) + String(v);
    else return null;
  }
  return out;
}

/**
 * pino, with one shortcut: a line whose object is flat (strings, numbers, booleans; every request's
 * line is one) is written here, the same JSON pino writes (level, time, the members, msg), without
 * pino's per-line machinery (a fifth of an authenticated read's CPU on Deno, issue #33). Anything
 * else (errors, nested objects, secrets to censor) goes through pino and its redaction.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const p = pino(
    {
      level,
      base: undefined,
      timestamp: isoTime,
      formatters: { log: redactSecrets },
    },
    destination,
  );
  if (!destination) return p;
  const min = p.levelVal;
  const at = (num: number, slow: (obj: object, msg?: string) => void) => (obj: object, msg?: string) => {
    if (num < min) return;
    const members = obj !== null && typeof obj === "object" && (msg === undefined || typeof msg === "string") ? flatMembers(obj) : null;
    if (members === null) return slow(obj, msg);
    destination.write(`{"level":${num}${isoTime()}${members}${msg === undefined ? "" : `,"msg":${jsonString(msg)}`}}\n`);
  };
  const info = 30 >= min;
  return {
    debug: at(20, (o, m) => p.debug(o, m)),
    info: at(30, (o, m) => p.info(o, m)),
    warn: at(40, (o, m) => p.warn(o, m)),
    error: at(50, (o, m) => p.error(o, m)),
    // The gateway's line for every request: the members `info` would write for its object, in its
    // order, without making the object and walking it (issue #33).
    request(reqId, method, path, via, status, durationMs, keyId, account, clientGone) {
      if (!info) return;
      let line = `{"level":30${isoTime()},"req_id":${jsonString(reqId)},"method":${jsonString(method)},"path":${jsonString(path)}`;
      if (via !== undefined) line += `,"via":${jsonString(via)}`;
      line += `,"status":${finite(status)},"duration_ms":${finite(durationMs)}`;
      if (keyId !== undefined) line += `,"key_id":${jsonString(keyId)}`;
      if (account !== undefined) line += `,"account":${jsonString(account)}`;
      destination.write(clientGone ? `${line},"client_gone":true,"msg":"request"}\n` : `${line},"msg":"request"}\n`);
    },
  };
}

/** A number as pino writes it: not finite is null. */
const finite = (n: number): string => (Number.isFinite(n) ? String(n) : "null");

/** The servers' logger: JSON lines on stdout through an FdDestination, and a bounded flush for shutdown. */
export function createStdoutLogger(level: string): { logger: Logger; flush(ms?: number): Promise<void> } {
  const out = new FdDestination(1);
  // A process that ends without stopping (an uncaught error) still leaves the lines it had queued.
  process.once("exit", () => out.writeSyncQueued());
  return { logger: createLogger(level, out), flush: (ms) => out.flush(ms) };
}
