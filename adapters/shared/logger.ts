/** pino, one JSON line per event, with secrets redacted even if a caller passes one by mistake. */
import pino from "pino";
import type { Logger } from "../../core/ports.ts";

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
