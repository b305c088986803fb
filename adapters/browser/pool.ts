/**
 * The render port on Chromium through playwright-core (api.md §10). One browser, launched on
 * first use and again after a crash; every request gets a fresh context (no cookies, storage or
 * cache shared between requests), at most `maxPages` at once, shared fairly between accounts
 * (fair-slots.ts), all under the request's deadline.
 * Every connection the browser makes goes through the egress proxy (egress-proxy.ts), which
 * applies the page fetcher's address policy at connect time. Only http(s) URLs are opened
 * (Chromium itself keeps web pages away from file: and chrome: URLs); downloads and service
 * workers are refused. A page that spins, allocates without end or crashes is closed
 * with its context, and only its own request fails.
 */
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ApiError } from "../../core/errors.ts";
import type { AllowList } from "../../core/net/allow-list.ts";
import { BodyTooLarge, EgressRefused, FetchTimeout, UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import type { Logger, RenderAction, RenderedPage, RenderPort, RenderRequest } from "../../core/ports.ts";
import { DEFAULT_MAX_BYTES, type Resolver } from "../fetch/types.ts";
import { memoResolver } from "./dns-memo.ts";
import { checkTarget, startEgressProxy, type EgressProxy } from "./egress-proxy.ts";
import type { ProxyEntry, ProxyPool } from "../../core/net/proxy-pool.ts";
import { connectThrough } from "../fetch/proxy-connect.ts";
import { resolveProxy } from "../fetch/proxy.ts";
import { UpstreamNetworkError as ProxyError } from "../../core/net/fetch-errors.ts";
import { FairSlots, type SlotStats } from "./fair-slots.ts";

/**
 * Where distributions put Chromium; QUARRY_CHROMIUM_PATH comes first. The old headless shell
 * (Debian's chromium-headless-shell) is taken before the full browser: it renders the same pages
 * through the same network stack in about half the memory and time (bench/render).
 */
const KNOWN_PATHS = ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable", "/snap/bin/chromium",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium"];

/**
 * The rendered document as HTML, run in the page, or only its size in UTF-8 bytes when that is
 * over `maxBytes`: a page's script can make its document any size (one line made 40 MB), and a
 * string handed back crosses to Node whole, where decoding and extracting it stalled every other
 * request. Open shadow roots (web components that write their text there) are not in outerHTML;
 * when the page has any, they are serialized in place as declarative shadow roots (`<template
 * shadowrootmode>`), which extraction reads as the host's content.
 */
function readDocument(maxBytes: number): string | { bytes: number } {
  const root = document.documentElement;
  const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "";
  if (!root) return doctype;
  // No named inner functions: the function's source is sent to the page, and a bundler's name
  // helpers would not be defined there.
  const shadows: ShadowRoot[] = [];
  const scopes: (Document | ShadowRoot)[] = [document];
  for (let scope = scopes.pop(); scope; scope = scopes.pop()) {
    for (const el of Array.from(scope.querySelectorAll("*"))) if (el.shadowRoot) { shadows.push(el.shadowRoot); scopes.push(el.shadowRoot); }
  }
  const getHTML = (root as unknown as { getHTML?: (o: { shadowRoots: ShadowRoot[] }) => string }).getHTML;
  let html: string;
  if (!shadows.length || typeof getHTML !== "function") html = doctype + root.outerHTML;
  else {
    const open = (root.cloneNode(false) as Element).outerHTML.replace(/<\/html>$/i, "");
    html = `${doctype}${open}${getHTML.call(root, { shadowRoots: shadows })}</html>`;
  }
  // Every UTF-16 unit is at least one byte and at most three: count only when it can matter.
  if (html.length > maxBytes) return { bytes: html.length };
  if (html.length * 3 <= maxBytes) return html;
  let bytes = 0;
  for (let i = 0; i < html.length; i++) {
    const c = html.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < html.length) {
      bytes += 4; // a surrogate pair: one four-byte character
      i++;
    } else bytes += 3;
  }
  return bytes > maxBytes ? { bytes } : html;
}

/**
 * Whether the egress proxy refused the tunnel to `url`'s host and port by its policy (a private
 * address) since refusal `mark`, as opposed to failing to reach it or to resolve its name: the
 * browser says ERR_TUNNEL_CONNECTION_FAILED for all of them.
 */
function refusedByPolicy(proxy: EgressProxy, mark: number, url: string): boolean {
  const u = new URL(url);
  const target = `${u.hostname}:${Number(u.port) || (u.protocol === "https:" ? 443 : 80)}: `;
  return proxy.refused.slice(mark).some((r) => r.startsWith(target) && !/^could not resolve |has no address$/.test(r.slice(target.length)));
}

export function findChromium(configured: string | null): string | null {
  if (configured) return existsSync(configured) ? configured : null;
  return KNOWN_PATHS.find((p) => existsSync(p)) ?? null;
}

export const INSTALL_HINT =
  "Rendering needs Chromium: install it (Debian: apt-get install chromium-headless-shell, the lightest, or chromium) or point QUARRY_CHROMIUM_PATH at a Chrome or Chromium executable.";

export interface BrowserPoolOptions {
  executablePath: string | null;
  maxPages: number;
  allow: AllowList;
  resolver: Resolver;
  userAgent: string;
  logger: Logger;
  /** Largest rendered document handed back, in UTF-8 bytes; the page fetcher's cap (10 MiB) by default. */
  maxBytes?: number;
  /** Slots one account may hold at once; by default all but a quarter of `maxPages` (fair-slots.ts). */
  pagesPerAccount?: number;
  /** QUARRY_PROXIES: renders that ask for a proxy get a context whose egress chains through the pool's next one (api.md §12). */
  proxies?: ProxyPool;
}

const REDIRECT_REFUSED = "The page redirected to an address Quarry does not fetch (private or non-public).";

/** Longest one action may wait for its selector, ms (within what is left of the deadline). */
const ACTION_TIMEOUT_MS = 5_000;
/** Longest the renderer waits for the network to go quiet after the document is in, ms. */
const SETTLE_MS = 2_500;
/** The network is quiet once no request of the page has been open for this long, ms. */
const QUIET_MS = 300;
/** Longest a scroll waits for what it makes the page load, ms. */
const SCROLL_SETTLE_MS = 1_500;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** The page's requests in flight, and when that last changed (every frame and worker of the page). */
class Traffic {
  inflight = 0;
  changedAt = Date.now();
  constructor(page: Page) {
    page.on("request", () => this.touch(1));
    page.on("requestfinished", () => this.touch(-1));
    page.on("requestfailed", () => this.touch(-1));
  }
  touch(delta = 0): void {
    this.inflight = Math.max(0, this.inflight + delta);
    this.changedAt = Date.now();
  }
}

/**
 * Waits until the page's network has been quiet for QUIET_MS (at most `maxMs`, within the
 * deadline). Quiet is confirmed by a round trip to the page's main thread: a script that ran
 * long meanwhile may just have asked for more (an app bundle that then fetches its data), and
 * then the wait goes on. A page that never goes quiet is read as it is at `maxMs`.
 */
async function settle(page: Page, traffic: Traffic, maxMs: number, deadline: number): Promise<void> {
  const until = Math.min(deadline, Date.now() + maxMs);
  for (;;) {
    while (Date.now() < until && !(traffic.inflight === 0 && Date.now() - traffic.changedAt >= QUIET_MS)) await sleep(Math.min(25, until - Date.now()));
    if (Date.now() >= until) return;
    const asked = Date.now();
    await Promise.race([page.evaluate(() => 0).catch(() => {}), sleep(until - asked)]);
    if (traffic.inflight === 0 && traffic.changedAt <= asked) return;
  }
}

/** What a page loads only to be seen: not fetched unless a screenshot is asked for. */
const UNSEEN = ["Image", "Media", "Font"] as const;

/**
 * Fails the page's image, media and font requests in the browser, before they reach the network:
 * the text read from the page is the same without them, and they are most of a page's bytes and of
 * a renderer's decoded memory. Only requests of those types stop at the Fetch domain; documents,
 * scripts, styles and XHR/fetch go on untouched.
 */
async function skipUnseen(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  cdp.on("Fetch.requestPaused", (e: { requestId: string }) => {
    void cdp.send("Fetch.failRequest", { requestId: e.requestId, errorReason: "BlockedByClient" }).catch(() => {});
  });
  await cdp.send("Fetch.enable", { patterns: UNSEEN.map((resourceType) => ({ urlPattern: "*", resourceType, requestStage: "Request" as const })) });
}

export interface BrowserPool extends RenderPort {
  /** Page slots in use and waited for, and who holds them. */
  slots(): SlotStats;
  close(): Promise<void>;
}

/** Longest an answer waits for its page to close; the slot itself is given back only once it has. */
const CLOSE_WAIT_MS = 2_000;

export function createBrowserPool(options: BrowserPoolOptions): BrowserPool {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  // Shared fairly between accounts (fair-slots.ts): one account's renders cannot hold them all.
  const slots = new FairSlots(options.maxPages, options.pagesPerAccount);
  // One memo for the pool's life: the proxy of a relaunched browser keeps what was learnt.
  const resolver = memoResolver(options.resolver);
  let browser: Promise<{ browser: Browser; proxy: EgressProxy }> | null = null;
  let lastError: string | null = null;
  let closed = false;
  // The running browser's proxy, for its socket counts.
  let egress: EgressProxy | null = null;
  // One guarded egress listener per operator proxy, for the contexts of proxied renders: each checks
  // every connection as the browser's own does, then goes through its proxy to the checked address.
  const chained = new Map<string, Promise<EgressProxy>>();
  function egressVia(entry: ProxyEntry): Promise<EgressProxy> {
    let listener = chained.get(entry.id);
    if (!listener) {
      const upstream = resolveProxy(entry.url);
      listener = startEgressProxy({
        allow: options.allow, resolver, log: (m) => options.logger.debug({}, m),
        via: {
          connect: (address, port) => connectThrough(upstream, address, port),
          onProxyFailure: (err) => void (err instanceof ProxyError && err.proxySide && options.proxies?.failed(entry)),
        },
      });
      chained.set(entry.id, listener);
    }
    return listener;
  }

  async function launch(): Promise<{ browser: Browser; proxy: EgressProxy }> {
    if (!options.executablePath) throw new ApiError("browser_unavailable", INSTALL_HINT);
    const proxy = await startEgressProxy({ allow: options.allow, resolver, log: (m) => options.logger.debug({}, m) });
    try {
      const { chromium } = await import("playwright-core");
      const b = await chromium.launch({
        executablePath: options.executablePath,
        args: [
          `--proxy-server=${proxy.url}`,
          // Chromium bypasses proxies for loopback by default; this takes that exception away.
          "--proxy-bypass-list=<-loopback>",
          "--disable-quic",
          "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
          "--disable-background-networking",
          "--disable-dev-shm-usage",
          "--no-first-run",
          // Memory: no GPU process, no extensions, and frames of one page share its renderer.
          "--disable-gpu",
          "--disable-extensions",
          "--disable-site-isolation-trials",
          // No spare renderer kept warm beside the pages, no crash reporter process tree.
          "--disable-features=site-per-process,IsolateOrigins,Translate,BackForwardCache,MediaRouter,SpareRendererForSitePerProcess",
          "--disable-breakpad",
          "--disable-crash-reporter",
          `--renderer-process-limit=${options.maxPages + 1}`,
          // A page that allocates without end dies at this heap size, alone in its renderer.
          "--js-flags=--max-old-space-size=256",
          ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
        ],
      });
      egress = proxy;
      b.on("disconnected", () => {
        options.logger.warn({}, "the browser exited; it is started again on the next render");
        forget(b);
        void proxy.close();
      });
      lastError = null;
      return { browser: b, proxy };
    } catch (err) {
      await proxy.close();
      lastError = err instanceof Error ? err.message.split("\n")[0]! : String(err);
      throw new ApiError("browser_unavailable", `The browser could not be started (${lastError}). ${INSTALL_HINT}`);
    }
  }

  /** The browser for the next render: the running one, or one started now. */
  function current(): Promise<{ browser: Browser; proxy: EgressProxy }> {
    if (!browser) {
      const starting = launch();
      browser = starting;
      starting.then((b) => (running = b.browser), () => browser === starting && (browser = null));
    }
    return browser;
  }
  let running: Browser | null = null;
  /** Drops `b` if it is still the one renders get (not a successor started meanwhile). */
  function forget(b: Browser): void {
    if (running !== b) return;
    running = null;
    browser = null;
  }

  /**
   * A fresh context. A browser that died an instant ago (killed, crashed) may not have told us yet:
   * if opening fails and the browser is gone, it is started again once for this request.
   */
  async function openContext(proxyServer?: string): Promise<BrowserContext> {
    for (let attempt = 0; ; attempt++) {
      const { browser: b } = await current();
      try {
        return await b.newContext({
          ...(proxyServer ? { proxy: { server: proxyServer, bypass: "<-loopback>" } } : {}),
          acceptDownloads: false,
          serviceWorkers: "block",
          userAgent: options.userAgent,
          viewport: { width: 1280, height: 900 },
          ignoreHTTPSErrors: false,
        });
      } catch (err) {
        if (attempt > 0 || b.isConnected()) throw err;
        options.logger.warn({}, "the browser was gone when a render began; starting it again");
        forget(b);
      }
    }
  }

  async function runAction(page: Page, traffic: Traffic, action: RenderAction, index: number, deadline: number): Promise<void> {
    const timeout = Math.max(1, Math.min(ACTION_TIMEOUT_MS, deadline - Date.now()));
    try {
      switch (action.type) {
        case "wait":
          if (action.selector) await page.waitForSelector(action.selector, { timeout });
          else await page.waitForTimeout(Math.min(action.ms ?? 1_000, Math.max(0, deadline - Date.now())));
          break;
        case "click":
          await page.click(action.selector!, { timeout });
          break;
        case "scroll":
          await page.mouse.wheel(0, action.direction === "up" ? -(action.amount ?? 2_000) : action.amount ?? 2_000);
          // The page's scroll handler may ask for more: a full quiet window from here.
          traffic.touch();
          await settle(page, traffic, SCROLL_SETTLE_MS, deadline);
          break;
        case "write":
          if (action.selector) await page.fill(action.selector, action.text ?? "", { timeout });
          else await page.keyboard.type(action.text ?? "");
          break;
        case "press":
          await page.keyboard.press(action.key!);
          break;
      }
    } catch (err) {
      const what = action.selector ? `${action.type} ${action.selector}` : action.type;
      const why = err instanceof Error ? err.message.split("\n")[0]! : String(err);
      throw new ApiError("action_failed", `Action ${index} (${what}) failed: ${why}`);
    }
  }

  /** What a render is waiting on, for the deadline's message: the page was fetched long before. */
  type Stage = { waiting: string | null; loading?: boolean };
  // Only time spent loading the page says the site may be unreachable (FetchTimeout.reaching), not the browser's start-up or the page's waits.
  const timedOut = (req: RenderRequest, stage: Stage) =>
    new FetchTimeout(req.url, req.timeoutMs, stage.waiting ? `${stage.waiting} on ${req.url} within ${req.timeoutMs} ms (timeout_ms).` : undefined, !stage.waiting && stage.loading === true);

  async function renderIn(context: BrowserContext, req: RenderRequest, deadline: number, stage: Stage, proxy: EgressProxy): Promise<RenderedPage> {
    const page = await context.newPage();
    if (!req.screenshot) await skipUnseen(context, page);
    const traffic = new Traffic(page);
    // The document's last hop (a redirect's target), for telling why its tunnel failed.
    let hop = req.url;
    page.on("request", (r) => void (r.isNavigationRequest() && r.frame() === page.mainFrame() && (hop = r.url())));
    const mark = proxy.refused.length;
    // Whether the main frame's latest navigation was refused by the egress policy. Not only the
    // first: a script (location.href), a meta refresh or a clicked link can take the page to a
    // private address later, and the document read would then be the proxy's refusal or Chromium's
    // error page, answered 200 and charged (#28 item 5). Such a page is refused as a redirect there is.
    let navRefused: EgressRefused | null = null;
    const mainNavigation = (r: { isNavigationRequest(): boolean; frame(): unknown }) => r.isNavigationRequest() && r.frame() === page.mainFrame();
    page.on("response", (r) => {
      if (!mainNavigation(r.request())) return;
      const egress = new URL(r.url()).protocol === "http:" ? r.headers()["x-quarry-egress"] : undefined;
      navRefused = egress === "refused" || egress === "unresolvable" ? new EgressRefused(REDIRECT_REFUSED, egress === "refused" ? "non_public_address" : "unresolvable") : null;
    });
    page.on("requestfailed", (r) => {
      if (!mainNavigation(r)) return;
      const why = r.failure()?.errorText ?? "";
      if (/ERR_TUNNEL_CONNECTION_FAILED/.test(why) && refusedByPolicy(proxy, mark, r.url())) navRefused = new EgressRefused(REDIRECT_REFUSED, "non_public_address", why);
    });
    const crashed = new Promise<never>((_, reject) =>
      page.on("crash", () => reject(new UpstreamNetworkError("The page crashed the browser tab while rendering (it used too much memory or crashed on purpose)."))),
    );
    crashed.catch(() => {});
    const work = (async (): Promise<RenderedPage> => {
      const left = () => Math.max(1, deadline - Date.now());
      let response;
      try {
        stage.loading = true;
        response = await page.goto(req.url, { waitUntil: "domcontentloaded", timeout: left() });
      } catch (err) {
        const why = err instanceof Error ? err.message.split("\n")[0]! : String(err);
        if (/ERR_TUNNEL_CONNECTION_FAILED/.test(why) && refusedByPolicy(proxy, mark, hop)) {
          throw new EgressRefused(REDIRECT_REFUSED, "non_public_address", why);
        }
        if (/ERR_TUNNEL_CONNECTION_FAILED|ERR_PROXY/.test(why)) {
          // Quarry's egress proxy could not connect to the host, or the host's name did not resolve.
          throw new UpstreamNetworkError("The browser could not connect to the page: it is not reachable, or Quarry's egress policy refused it.", why, { unreachable: true });
        }
        if (/Timeout/i.test(why)) throw new FetchTimeout(req.url, req.timeoutMs);
        const unreachable = /ERR_(CONNECTION_(REFUSED|RESET|TIMED_OUT|CLOSED)|NAME_NOT_RESOLVED|ADDRESS_UNREACHABLE|INTERNET_DISCONNECTED|CERT_|SSL_)/.test(why);
        throw new UpstreamNetworkError(`The browser could not load the page (${why.replace(/^page\.goto: /, "")}).`, why, { unreachable });
      }
      stage.loading = false;
      // The egress proxy's own answer, not the site's (it drops a site's header of that name; https answers never pass through it).
      const egress = response && new URL(response.url()).protocol === "http:" ? response.headers()["x-quarry-egress"] : undefined;
      if (egress === "refused" || egress === "unresolvable") {
        throw new EgressRefused(REDIRECT_REFUSED, egress === "refused" ? "non_public_address" : "unresolvable");
      }
      if (egress === "unreachable") {
        const code = response!.headers()["x-quarry-egress-error"] ?? "";
        throw new UpstreamNetworkError(`The browser could not connect to ${new URL(response!.url()).host}: it gave no answer (${code}).`, `egress proxy: ${code} for ${response!.url()}`, { unreachable: true });
      }
      // Let scripts fetch what they need, but never wait on a page that never goes quiet.
      await settle(page, traffic, SETTLE_MS, deadline);
      if (typeof req.waitFor === "number") await page.waitForTimeout(Math.min(req.waitFor, left()));
      else if (req.waitFor) {
        stage.waiting = `wait_for: "${req.waitFor}" did not appear`;
        await page.waitForSelector(req.waitFor, { timeout: left() }).catch((err: unknown) => {
          const why = err instanceof Error ? err.message.split("\n")[0]! : String(err);
          if (/Timeout/i.test(why)) throw timedOut(req, stage);
          throw new ApiError("action_failed", `wait_for: "${req.waitFor}" failed: ${why}`);
        });
      }
      for (const [i, action] of (req.actions ?? []).entries()) {
        stage.waiting = `action ${i} (${action.type}${action.selector ? ` ${action.selector}` : ""}) had not finished`;
        await runAction(page, traffic, action, i, deadline);
      }
      stage.waiting = null;
      // The page went on to an address the policy refuses: what is left to read is not the page.
      if (navRefused) throw navRefused;
      // Read in the page's own world: page.content() first injects Playwright's utility script,
      // which cost 0.1 to 1.8 s per page here; this is one call.
      // The page's scripts can tamper with what they see there, but only to spoil their own text.
      const read = await page.evaluate(readDocument, maxBytes).catch((err) => {
        throw new UpstreamNetworkError("The rendered page could not be read.", err instanceof Error ? err.message.split("\n")[0]! : String(err));
      });
      // The static fetcher's cap and answer (422 unsupported_content), on what the browser would hand back.
      if (typeof read !== "string") throw new BodyTooLarge(page.url(), maxBytes, read.bytes);
      const html = read;
      const screenshot = req.screenshot ? new Uint8Array(await page.screenshot({ type: "png", timeout: left() })) : undefined;
      const contentType = response?.headers()["content-type"] ?? null;
      return { finalUrl: page.url(), status: response?.status() ?? 200, html, contentType, headers: response?.headers() ?? {}, ...(screenshot ? { screenshot } : {}) };
    })();
    return Promise.race([work, crashed]);
  }

  return {
    async render(req) {
      if (closed) throw new ApiError("browser_unavailable", "The browser is shutting down.");
      const deadline = Date.now() + req.timeoutMs;
      const first = new URL(req.url);
      const verdict = await checkTarget(first.hostname, Number(first.port) || (first.protocol === "https:" ? 443 : 80), options.allow, resolver);
      // A name that does not resolve is refused as the page fetcher refuses it: with the same answer as a private one, but known to say the site is unreachable.
      if (!verdict.ok) throw new EgressRefused("Quarry does not fetch private or non-public addresses.", verdict.unresolvable ? "unresolvable" : "non_public_address", verdict.why);
      // One signal for the deadline and the caller's (a cancelled job): either closes the page.
      const timer = new AbortController();
      const stage: Stage = { waiting: null };
      const timeout = setTimeout(() => timer.abort(timedOut(req, stage)), req.timeoutMs);
      const cancel = () => timer.abort(req.signal!.reason ?? new DOMException("The render was cancelled.", "AbortError"));
      if (req.signal?.aborted) cancel();
      else req.signal?.addEventListener("abort", cancel, { once: true });
      const unlink = () => {
        clearTimeout(timeout);
        req.signal?.removeEventListener("abort", cancel);
      };
      let release: () => void;
      try {
        release = await slots.take(req.account ?? "", timer.signal);
      } catch (err) {
        unlink();
        throw req.signal?.aborted ? err : new FetchTimeout(req.url, req.timeoutMs, undefined, false); // the browser was busy, not the site
      }
      const aborted = new Promise<never>((_, reject) => {
        if (timer.signal.aborted) reject(timer.signal.reason);
        else timer.signal.addEventListener("abort", () => reject(timer.signal.reason), { once: true });
      });
      aborted.catch(() => {});
      let context: Promise<BrowserContext> | null = null;
      try {
        const work = (async () => {
          const { proxy: own } = await current();
          if (timer.signal.aborted) throw timer.signal.reason;
          // Through the operator's proxies: a context of its own whose egress chains through the pool's next proxy.
          let entry: ProxyEntry | null = null;
          if (req.proxy) {
            entry = options.proxies?.pick(first.host, req.proxy).entry ?? null;
            if (!entry) throw new ProxyError("No proxy is available for this render (QUARRY_PROXIES): none configured for it, or every one paused.", undefined, { proxySide: true });
          }
          const proxy = entry ? await egressVia(entry) : own;
          context = openContext(entry ? proxy.url : undefined);
          const ctx = await context;
          if (req.headers) await ctx.setExtraHTTPHeaders(req.headers);
          const page = await renderIn(ctx, req, deadline, stage, proxy).catch((err) => {
            if (err instanceof ApiError || timer.signal.aborted) throw err;
            // Playwright's own errors: the browser died under the page, or something unforeseen.
            const why = err instanceof Error ? err.message.split("\n")[0]! : String(err);
            if (!ctx.browser()?.isConnected()) {
              throw new ApiError("browser_unavailable", "The browser exited while rendering this page; it is started again for the next render.");
            }
            throw new UpstreamNetworkError("The browser could not render the page.", why);
          });
          if (entry) options.proxies?.succeeded(entry);
          return entry ? { ...page, via: entry.label } : page;
        })();
        work.catch(() => {});
        return await Promise.race([work, aborted]);
      } finally {
        unlink();
        // Closing the context ends its pages, a spinning or crashed one included (one still being
        // opened when the deadline or the cancel came is closed as soon as it exists). The slot
        // is free once it is closed; the answer waits for that only briefly (timeout_ms bounds it).
        const closing = Promise.resolve((context as Promise<BrowserContext> | null)?.then((c) => c.close())).catch(() => {}).finally(release);
        await Promise.race([closing, sleep(CLOSE_WAIT_MS)]);
      }
    },
    health() {
      const proxies = !!options.proxies?.size;
      if (!options.executablePath) return { status: "disabled", pages_in_use: 0, max_pages: options.maxPages, error: INSTALL_HINT };
      if (lastError && !browser) return { status: "unavailable", pages_in_use: slots.stats().inUse, max_pages: options.maxPages, error: lastError, proxies };
      return { status: "ok", pages_in_use: slots.stats().inUse, max_pages: options.maxPages, proxies };
    },
    slots: () => slots.stats(),
    egressSockets: () => egress?.sockets() ?? { client: 0, upstream: 0 },
    async close() {
      closed = true;
      const b = await browser?.catch(() => null);
      if (b) {
        await b.browser.close().catch(() => {});
        await b.proxy.close();
      }
      await Promise.all([...chained.values()].map((l) => l.then((e) => e.close(), () => {})));
    },
  };
}
