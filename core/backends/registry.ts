/**
 * The typed registry: which backends exist, and for each whether it can run with the
 * operator's settings. The caller parses the environment into a plain object; the core never
 * reads env. A backend missing what it needs is `disabled` with a reason, never silently empty.
 */
import type { Backend, BackendConfig, BackendKind } from "./types.ts";

/** Settings of one backend as the operator gave them (`QUARRY_<ID>_URL`, `_KEY`, `_TOKEN`). */
export interface BackendSettingsInput {
  url?: string;
  key?: string;
  token?: string;
}

export type BackendsSettings = Readonly<Record<string, BackendSettingsInput | undefined>>;

export type RegistryEntry =
  | { id: string; backend: Backend<unknown>; enabled: true; config: BackendConfig }
  | { id: string; backend: Backend<unknown>; enabled: false; reason: string };

export interface BackendRegistry {
  /** Every known backend, in registration order. */
  readonly entries: readonly RegistryEntry[];
  get(id: string): RegistryEntry | undefined;
  /** Ids of one kind, enabled or not. */
  ids(kind?: BackendKind): string[];
}

function envName(id: string, what: string): string {
  return `QUARRY_${id.toUpperCase()}_${what}`;
}

/** Checks a base URL; `{lang}` placeholders are filled with a sample language first. */
function checkBaseUrl(raw: string): string | null {
  const trimmed = raw.trim().replace(/\/+$/, "");
  if (!URL.canParse(trimmed.replaceAll("{lang}", "en"))) return null;
  const { protocol } = new URL(trimmed.replaceAll("{lang}", "en"));
  return protocol === "http:" || protocol === "https:" ? trimmed : null;
}

export function resolveBackend(backend: Backend<unknown>, settings: BackendSettingsInput = {}): RegistryEntry {
  const { id, needs = [], defaultBaseUrl } = backend.about;
  const off = (reason: string): RegistryEntry => ({ id, backend, enabled: false, reason });
  const rawUrl = settings.url?.trim() || defaultBaseUrl;
  if (!rawUrl) return off(`no base URL configured (${envName(id, "URL")})`);
  const baseUrl = checkBaseUrl(rawUrl);
  if (!baseUrl) return off(`${envName(id, "URL")} is not an http(s) URL`);
  const key = settings.key?.trim() || undefined;
  const token = settings.token?.trim() || undefined;
  if (needs.includes("key") && !key) return off(`no API key configured (${envName(id, "KEY")})`);
  if (needs.includes("token") && !token) return off(`no token configured (${envName(id, "TOKEN")})`);
  const config: BackendConfig = { baseUrl, ...(key ? { key } : {}), ...(token ? { token } : {}) };
  return { id, backend, enabled: true, config };
}

export function createRegistry(settings: BackendsSettings = {}, backends: readonly Backend<unknown>[]): BackendRegistry {
  const entries = backends.map((b) => resolveBackend(b, settings[b.about.id]));
  const byId = new Map(entries.map((e) => [e.id, e]));
  if (byId.size !== entries.length) throw new Error("duplicate backend id in registry");
  return {
    entries,
    get: (id) => byId.get(id),
    ids: (kind) => entries.filter((e) => !kind || e.backend.about.kind === kind).map((e) => e.id),
  };
}
