/**
 * Health of the operator's SearXNG (services.metasearch). SearXNG is the operator's own
 * service, so asking its /healthz is fine; scraped engines are never probed (api.md §7).
 */
import type { FetchPort } from "../ports.ts";

export function metasearchProbe(fetch: FetchPort, url: string, timeoutMs = 2_000) {
  return async (): Promise<Record<string, unknown>> => {
    const t0 = performance.now();
    try {
      const res = await fetch(new URL("healthz", url.endsWith("/") ? url : `${url}/`), { signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel();
      if (!res.ok) return { status: "unreachable", url, error: `HTTP ${res.status}` };
      return { status: "ok", url, latency_ms: Math.round(performance.now() - t0) };
    } catch (err) {
      return { status: "unreachable", url, error: err instanceof Error ? err.message : String(err) };
    }
  };
}
