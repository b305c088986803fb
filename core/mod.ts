/** Quarry's core, importable on its own: `import { createApp } from "quarry/core"`. */
export { createApp, createQuarry, type AppOptions, type Quarry } from "./app.ts";
export { parseConfig, ConfigError, BACKEND_IDS, type Config, type Env } from "./config.ts";
export { ApiError, StorageError, ERROR_STATUS, type ErrorCode } from "./errors.ts";
export * from "./ports.ts";
export { DEFAULT_PLANS, LOWEST_PLAN, type Plan, type PlanTable } from "./limits/plans.ts";
export { periodOf, periodResetAt, isoSeconds, WINDOW_MS } from "./limits/period.ts";
export { SlidingWindow, retryAfterSeconds } from "./limits/sliding-window.ts";
export { USAGE_GROUPS } from "./limits/groups.ts";
export { SCOPES, isScope } from "./keys/scopes.ts";
export { generateSecret, hashSecret, maskSecret, isWellFormedSecret, SECRET_PATTERN } from "./keys/secret.ts";
export { createKey, listKeys, revokeKey, ensureAccount, type PublicKey } from "./keys/service.ts";
export type { RouteDef } from "./gateway/route.ts";
export type { AppEnv, AppDeps } from "./gateway/context.ts";
