import { describe, expect, it } from "vitest";
import { ConfigError } from "../../core/config.ts";
import { parseServerLimits } from "../../adapters/shared/server-limits.ts";

describe("connection limit variables", () => {
  it("defaults keep a 1024 open-file limit safe and headers short", () => {
    expect(parseServerLimits({})).toEqual({
      headerTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 65_000,
      keepAliveMaxRequests: 1000,
      maxConnections: 768,
      maxConnectionsPerAddress: 256,
    });
    expect(parseServerLimits({ QUARRY_MAX_CONNECTIONS_PER_ADDRESS: "0" }).maxConnectionsPerAddress).toBe(0);
  });

  it.each([
    [{ QUARRY_HEADER_TIMEOUT: "0" }, "QUARRY_HEADER_TIMEOUT"],
    [{ QUARRY_HEADER_TIMEOUT: "1.5" }, "QUARRY_HEADER_TIMEOUT"],
    [{ QUARRY_MAX_CONNECTIONS: "lots" }, "QUARRY_MAX_CONNECTIONS"],
    [{ QUARRY_MAX_CONNECTIONS_PER_ADDRESS: "-1" }, "QUARRY_MAX_CONNECTIONS_PER_ADDRESS"],
    [{ QUARRY_HEADER_TIMEOUT: "20", QUARRY_REQUEST_TIMEOUT: "10" }, "QUARRY_REQUEST_TIMEOUT"],
  ])("%j is refused naming %s", (env, variable) => {
    expect(() => parseServerLimits(env)).toThrow(ConfigError);
    expect(() => parseServerLimits(env)).toThrow(new RegExp(`^${variable}: `));
  });
});
