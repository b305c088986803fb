/** Shared backend test helpers: recorded fixtures and upstream answers (the fake clock is tests/helpers/clock.ts). */
import { readFileSync } from "node:fs";
import type { BackendQuery, UpstreamResponse } from "../../core/backends/types.ts";

export function fixture(path: string): string {
  return readFileSync(new URL(`../fixtures/upstream/${path}`, import.meta.url), "utf8");
}

export function answer(body: string, status = 200, headers: Record<string, string> = {}): UpstreamResponse {
  return { status, headers: new Headers(headers), body };
}

export function query(overrides: Partial<BackendQuery> = {}): BackendQuery {
  return { query: "test", maxResults: 50, language: "en", freshness: null, ...overrides };
}

export { FakeClock, flush } from "../helpers/clock.ts";
