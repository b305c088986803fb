/** pino, one JSON line per event, with secrets redacted even if a caller passes one by mistake. */
import { write as fsWrite } from "node:fs";
import pino from "pino";
import type { Logger } from "../../core/ports.ts";

/** Lines waiting for a slow reader beyond this are dropped rather than held in memory. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

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

  constructor(private readonly fd: number) {}

  write(line: string): boolean {
    if (this.broken) return true;
    if (this.queuedBytes + line.length > MAX_QUEUED_BYTES) {
      this.dropped++;
      return true;
    }
    this.queue.push(line);
    this.queuedBytes += line.length;
    if (!this.writing) {
      // The lines of one turn of the event loop go out in one write, at its end: a write per
      // line cost a system call and a thread-pool round trip per request.
      this.writing = true;
      setImmediate(() => this.next());
    }
    return true;
  }

  private next(): void {
    if (this.broken || !this.queue.length) {
      this.writing = false;
      for (const done of this.idle.splice(0)) done();
      return;
    }
    this.writing = true;
    const chunk = this.queue.join("");
    this.queue = [];
    this.queuedBytes = 0;
    this.send(Buffer.from(chunk));
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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ["authorization", "headers.authorization", "req.headers.authorization", "key", "secret", "*.key", "*.secret"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}

/** The servers' logger: JSON lines on stdout through an FdDestination, and a bounded flush for shutdown. */
export function createStdoutLogger(level: string): { logger: Logger; flush(ms?: number): Promise<void> } {
  const out = new FdDestination(1);
  return { logger: createLogger(level, out), flush: (ms) => out.flush(ms) };
}
