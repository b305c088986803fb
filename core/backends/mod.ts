/** Search backends: the interface, the registry of web backends and the concurrent runner. */
export type * from "./types.ts";
export { brave } from "./brave.ts";
export { duckduckgo } from "./duckduckgo.ts";
export { searxng } from "./searxng.ts";
export { wikipedia } from "./wikipedia.ts";
export { createRegistry, resolveBackend, WEB_BACKENDS } from "./registry.ts";
export type { BackendRegistry, BackendSettingsInput, BackendsSettings, RegistryEntry } from "./registry.ts";
export { createRunner } from "./runner.ts";
export type { BackendHealth, BackendRunner, BackendRunStatus, HealthStatus, RunOutcome, RunRequest, RunnerOptions, RunStatus, Timers } from "./runner.ts";
export { DEFAULT_BREAKER_POLICY } from "./circuit-breaker.ts";
export type { BreakerPolicy } from "./circuit-breaker.ts";
