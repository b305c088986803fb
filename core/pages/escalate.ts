/**
 * Escalation (api.md §12): how one read gets past a bot wall. With `proxy: "auto"` (the default)
 * the page is read statically first; when the answer is a block (core/net/blocks.ts) it is
 * rendered in the browser; when the browser is blocked too, it goes through one of the operator's
 * proxies (QUARRY_PROXIES), rendered when the read needs a browser. The first step that works is
 * remembered per host (`ports.hosts`, shared by every instance on the same storage) and the next
 * read of that host, a crawl's every page included, starts there. `proxy: "none"` never uses a
 * proxy; `proxy: "<pool>"` reads through that pool from the start.
 *
 * `location.country` picks a proxy tagged with that country from the start, and
 * `location.languages` is sent as Accept-Language; with no proxy for that country the read goes
 * on without one and `location_note` says so, never silently.
 *
 * What was tried is `fetch_path`: `["static: 403 cloudflare challenge", "render: ok"]`. A read
 * blocked on every step is the free `blocked` error, never the wall passed off as the page.
 */
import { ApiError } from "../errors.ts";
import { detectBlock, describeBlock, type Block } from "../net/blocks.ts";
import { Blocked, isPageFetchError } from "../net/fetch-errors.ts";
import type { HostMemory, HostStep, Ports, ProxyChoice } from "../ports.ts";
import { NO_BROWSER, rendered, type Read, type RenderVia } from "./render.ts";

export type ProxyMode = "none" | "auto" | (string & {});
export type Step = HostStep["step"];

export interface Location {
  country?: string;
  languages?: string[];
}

/** What escalation needs of a read request (scrape's, or a job page's). */
export interface EscalationAsk {
  url: string;
  formats: readonly string[];
  wait_for?: string | number;
  actions?: import("../ports.ts").RenderAction[];
  signal?: AbortSignal;
  account?: string;
  proxy?: ProxyMode;
  location?: Location;
  /** `never`: the browser is not used, past a wall either. */
  render?: "auto" | "always" | "never";
}

export interface Escalated {
  read: Read;
  fetchPath: string[];
  locationNote?: string;
}

/** Used when the ports bring no shared memory (embedded cores, unit tests): this process's own. */
const localMemory = new Map<string, HostStep>();
const processMemory: HostMemory = {
  get: async (host) => {
    const s = localMemory.get(host);
    return s && s.until > Date.now() ? s : null;
  },
  set: async (host, step) => void localMemory.set(host, { step, until: Date.now() + 3_600_000 }),
};

/** Accept-Language for `location.languages` (q-values in the order given). */
export function acceptLanguage(location: Location | undefined): Record<string, string> {
  const langs = location?.languages?.filter(Boolean) ?? [];
  if (!langs.length) return {};
  return { "accept-language": langs.map((l, i) => (i === 0 ? l : `${l};q=${Math.max(0.1, 1 - i * 0.1).toFixed(1)}`)).join(", ") };
}

/** Refuses, before anything is read, a pool the operator does not have. */
export function checkProxyChoice(ports: Pick<Ports, "proxies">, proxy: ProxyMode | undefined): void {
  if (!proxy || proxy === "none" || proxy === "auto") return;
  const pools = ports.proxies?.pools() ?? [];
  if (!pools.includes(proxy)) {
    const message = pools.length
      ? `proxy must be "none", "auto" or one of this server's pools: ${pools.join(", ")}`
      : `proxy must be "none" or "auto": this server has no proxy pools (QUARRY_PROXIES)`;
    throw new ApiError("invalid_request", message, { details: [{ field: "proxy", message }] });
  }
}

function blockOf(read: Read): Block | null {
  return detectBlock(read.status, read.headers ?? new Headers(), read.body);
}

function browserUsable(ports: Ports, proxied: boolean): boolean {
  const health = ports.render?.health();
  return !!health && health.status !== "disabled" && (!proxied || health.proxies === true);
}

/**
 * Reads the page, escalating past blocks. `needsBrowser`: the read must be rendered (actions,
 * wait_for, a screenshot, render "always"), so there is no static step and the proxy step renders.
 */
export async function readEscalating(ports: Ports, req: EscalationAsk, timeoutMs: number, needsBrowser: boolean): Promise<Escalated> {
  const t0 = performance.now();
  const mode: ProxyMode = req.proxy ?? "auto";
  const host = new URL(req.url).host;
  const memory = ports.hosts ?? processMemory;
  const headers = acceptLanguage(req.location);
  const country = req.location?.country?.toLowerCase();
  const pool = mode !== "auto" && mode !== "none" ? mode : undefined;
  let choice: ProxyChoice = { ...(pool ? { pool } : {}), ...(country ? { country } : {}) };
  let locationNote: string | undefined;
  const haveProxies = (c: ProxyChoice) => (ports.proxies?.candidates(c).length ?? 0) > 0;
  if (country && (mode === "none" || !haveProxies(choice))) {
    locationNote = mode === "none"
      ? `location.country ${country} needs a proxy, and proxy is "none": the page was read from this server's own address.`
      : `No proxy${pool ? ` in pool "${pool}"` : ""} is tagged with country ${country} (QUARRY_PROXIES): the page was read without one for that country.`;
    choice = pool ? { pool } : {};
  }
  const byCountry = !!country && !locationNote;
  // Which steps, in order: a pool or a country asked for reads through a proxy from the start.
  const steps: Step[] = mode === "none" ? ["static", "render"] : pool || byCountry ? ["proxy"] : ["static", "render", "proxy"];
  if (needsBrowser && steps[0] === "static") steps.shift();
  const remembered = mode === "auto" && !byCountry ? await memory.get(host).catch(() => null) : null;
  const from = remembered ? Math.max(0, steps.indexOf(remembered.step)) : 0;
  const fetchPath: string[] = [];
  if (remembered && from > 0) fetchPath.push(`${remembered.step}: remembered for ${host}`);
  let lastBlock: Block | null = null;
  let lastError: unknown = null;
  const left = () => Math.max(1_000, timeoutMs - Math.round(performance.now() - t0));
  const signal = req.signal ? { signal: req.signal } : {};
  for (let i = from; i < steps.length; i++) {
    const step = steps[i]!;
    let read: Read;
    try {
      if (step === "static") {
        read = { ...(await ports.pages.fetchPage(req.url, { timeoutMs: left(), ...signal, ...(Object.keys(headers).length ? { headers } : {}) })), rendered: false };
      } else if (step === "render") {
        if (req.render === "never") {
          fetchPath.push('render: skipped (render is "never")');
          continue;
        }
        if (!browserUsable(ports, false)) {
          // Only a browser can do what was asked, and nothing was blocked: the same 503 as ever.
          if (needsBrowser && !lastBlock) throw new ApiError("browser_unavailable", NO_BROWSER);
          fetchPath.push("render: skipped (no browser)");
          continue;
        }
        read = await rendered(ports, req, left(), Object.keys(headers).length ? { headers } : {});
      } else {
        if (!haveProxies(choice)) {
          fetchPath.push(`proxy: skipped (no proxy${pool ? ` in pool "${pool}"` : ""} configured)`);
          continue;
        }
        if (needsBrowser && !browserUsable(ports, true)) {
          fetchPath.push("proxy: skipped (the browser cannot use proxies here)");
          continue;
        }
        const via: RenderVia = { proxy: choice, ...(Object.keys(headers).length ? { headers } : {}) };
        read = needsBrowser
          ? await rendered(ports, req, left(), via)
          : { ...(await ports.pages.fetchPage(req.url, { timeoutMs: left(), ...signal, ...via })), rendered: false };
      }
    } catch (err) {
      // A step after a block that fails otherwise (the browser down, every proxy dead): the
      // read stays blocked, and the path says why the step did not help.
      if (!lastBlock || req.signal?.aborted || !(isPageFetchError(err) || err instanceof ApiError)) throw err;
      fetchPath.push(`${step}: failed (${(err as Error).message})`);
      lastError = err;
      continue;
    }
    const block = blockOf(read);
    const named = `${step}${read.via ? ` ${read.via}` : ""}`;
    if (block) {
      fetchPath.push(`${named}: ${describeBlock(block)}`);
      lastBlock = block;
      continue;
    }
    fetchPath.push(`${named}: ${read.status < 400 ? "ok" : String(read.status)}`);
    // Remembered when it took escalating to get here (or the memory led here again): the next read starts at this step.
    // Only a step reached past a wall in this read (or one the memory led to again) is remembered:
    // a page that needed the browser for its own sake says nothing about the host.
    if (mode === "auto" && !byCountry && (lastBlock || remembered) && read.status < 400) await memory.set(host, step).catch(() => {});
    return { read, fetchPath, ...(locationNote ? { locationNote } : {}) };
  }
  if (!lastBlock) throw lastError ?? new ApiError("browser_unavailable", NO_BROWSER);
  const hint = mode === "none" ? 'proxy is "none": try proxy "auto".' : haveProxies(choice) ? "" : "Configure proxies (QUARRY_PROXIES) to get past it.";
  throw new Blocked(req.url, lastBlock!, fetchPath, hint);
}
