/**
 * The replay server of the upstreams (adapters/node/replay.ts, the one `quarry demo` serves),
 * and the environment that points the web search backends at it.
 */

export { RECORDED, startReplayServer, type Fault, type ReplayServer } from "../../adapters/node/replay.ts";

export function replayEnv(url: string): Record<string, string> {
  return {
    QUARRY_DUCKDUCKGO_URL: `${url}/duckduckgo`,
    QUARRY_WIKIPEDIA_URL: `${url}/wikipedia`,
    QUARRY_BRAVE_URL: `${url}/brave`,
    QUARRY_BRAVE_KEY: "test-key",
    QUARRY_SEARXNG_URL: `${url}/searxng`,
  };
}
