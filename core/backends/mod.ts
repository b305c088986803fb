/** Search backends: the interface, the registry of web backends and the concurrent runner. */
export type * from "./types.ts";
export { brave } from "./brave.ts";
export { duckduckgo } from "./duckduckgo.ts";
export { searxng } from "./searxng.ts";
export { wikipedia } from "./wikipedia.ts";
export { createRegistry, resolveBackend } from "./registry.ts";
export { BACKEND_IDS, CATALOGUE, SOCIAL_BACKENDS, VIDEO_BACKENDS, WEB_BACKENDS, WEB_BACKEND_IDS } from "./catalogue.ts";
export type { BackendRegistry, BackendSettingsInput, BackendsSettings, RegistryEntry } from "./registry.ts";
export { createRunner } from "./runner.ts";
export type { BackendHealth, BackendRunner, BackendRunStatus, HealthStatus, RunOutcome, RunRequest, RunnerOptions, RunStatus, Timers } from "./runner.ts";
export { DEFAULT_BREAKER_POLICY } from "./circuit-breaker.ts";
export type { BreakerPolicy } from "./circuit-breaker.ts";
