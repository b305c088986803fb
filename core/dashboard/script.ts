/**
 * The dashboard's behaviour, served as /dashboard/app.js (a plain browser module, no build step).
 * It only talks to the public API with `Authorization: Bearer <key>`; the key lives in this tab's
 * sessionStorage and nowhere else. All data is put into the page as text, never as markup.
 * (Kept free of backticks and dollar-brace so it can sit in this template string; the one
 * substitution below inserts the daily chart, daily-chart.ts.)
 */
import { DAILY_CHART_JS } from "./daily-chart.ts";

export const DASHBOARD_JS = String.raw`"use strict";
const STORE = "quarry.dashboard.key";
const KEY_RE = /^qry_[0-9a-f]{64}$/;
const SCOPES = {
  search: "web and video search",
  research: "research and social research",
  scrape: "fetch and extract pages",
  keys: "create, list and revoke keys",
};
const VIEWS = { keys: "Keys", usage: "Usage", collections: "Collections", health: "Health" };
const MSG = {
  revoked: "Your key was revoked or is unknown \u2014 sign in again.",
  network: "Can't reach the Quarry service \u2014 check your connection and try again.",
  noKeysScope: "This key can't manage keys \u2014 sign in with a key that has the \u201ckeys\u201d scope.",
};

const $ = (id) => document.getElementById(id);
const ui = {
  error: $("error"), notice: $("notice"), nav: $("nav"), who: $("who"), whoKey: $("who-key"),
  signinForm: $("signin-form"), signinKey: $("signin-key"), signinSubmit: $("signin-submit"),
  keysBody: $("keys-body"), keysCount: $("keys-count"), keysTitle: $("keys-title"),
  createForm: $("create-form"), createName: $("create-name"), createScopes: $("create-scopes"), createSubmit: $("create-submit"),
  usageKey: $("usage-key"), usageStats: $("usage-stats"), usageMeter: $("usage-meter"), usageGroups: $("usage-groups"),
  healthBanner: $("health-banner"), healthMeta: $("health-meta"), healthServices: $("health-services"), healthBackends: $("health-backends"),
  secretDialog: $("secret-dialog"), secretName: $("secret-name"), secretValue: $("secret-value"), secretCopy: $("secret-copy"),
  secretCopied: $("secret-copied"), secretDone: $("secret-done"),
  revokeDialog: $("revoke-dialog"), revokeText: $("revoke-text"), revokeSelf: $("revoke-self"),
  revokeCancel: $("revoke-cancel"), revokeConfirm: $("revoke-confirm"),
};

let key = null;
let keys = [];
let ownId = null;
let ownScopes = [];
let pendingRevoke = null;

// ---- small helpers ----
function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") el.textContent = String(v);
    else if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) el.append(kid);
  return el;
}
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...kids);
  return el;
}
function bar(fraction) {
  const w = Math.max(0, Math.min(100, fraction * 100));
  return svg("svg", { viewBox: "0 0 100 10", preserveAspectRatio: "none", "aria-hidden": "true", focusable: "false", class: "bar" },
    svg("rect", { class: "track", x: 0, y: 0, width: 100, height: 10, rx: 2 }),
    svg("rect", { class: "fill", x: 0, y: 0, width: w.toFixed(2), height: 10, rx: 2 }));
}
const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
function when(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : dateFmt.format(d);
}
function time(iso) {
  return h("time", { datetime: iso, title: iso, text: when(iso) });
}
const num = (n) => Number(n).toLocaleString();
function duration(secs) {
  const d = Math.floor(secs / 86400), hr = Math.floor(secs / 3600) % 24, m = Math.floor(secs / 60) % 60;
  if (d) return d + " d " + hr + " h";
  if (hr) return hr + " h " + m + " min";
  if (m) return m + " min " + (secs % 60) + " s";
  return secs + " s";
}
function mask(secret) {
  const hex = secret.slice(4);
  return "qry_" + hex.slice(0, 4) + "..." + hex.slice(-4);
}
function say(text) {
  ui.error.textContent = "";
  ui.notice.textContent = text;
}
function fail(text) {
  ui.notice.textContent = "";
  ui.error.textContent = text;
}
function quiet() {
  ui.error.textContent = "";
  ui.notice.textContent = "";
}
function busy(button, on) {
  button.disabled = on;
  if (on) button.setAttribute("aria-busy", "true");
  else button.removeAttribute("aria-busy");
}
function store(value) {
  try {
    if (value) sessionStorage.setItem(STORE, value);
    else sessionStorage.removeItem(STORE);
  } catch (e) { /* storage disabled: the key then lives only in this page */ }
}

// ---- the API ----
class Problem extends Error {
  constructor(message, code, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** One call to the public API; resolves to the JSON body or rejects with a Problem whose message is for people. */
async function call(method, path, body) {
  const headers = { Accept: "application/json", Authorization: "Bearer " + key };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit", cache: "no-store", redirect: "error",
    });
  } catch (e) {
    throw new Problem(MSG.network, "network", 0);
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  // /health answers 503 with a health record when the database is down: that is data, not an error.
  if (res.ok || (path === "/health" && data && typeof data.status === "string")) return data;
  throw explain(res, data);
}

function explain(res, data) {
  const err = (data && data.error) || {};
  const code = err.code || "http_" + res.status;
  const ref = err.request_id ? " (request " + err.request_id + ")" : "";
  const sentence = (s) => (/[.!?]$/.test(s) ? s : s + ".");
  let text;
  if (res.status === 401) {
    text = MSG.revoked;
  } else if (code === "rate_limited") {
    let n = Number.isInteger(err.retry_after) ? err.retry_after : parseInt(res.headers.get("Retry-After") || "", 10);
    if (!(n >= 0)) n = 60;
    text = "Too many requests \u2014 try again in " + n + " s.";
  } else if (code === "quota_exceeded") {
    const reset = res.headers.get("X-RateLimit-Reset");
    text = "This key's monthly quota is used up \u2014 it resets " + (reset ? "on " + when(reset) : "at the start of next month") + ".";
  } else if (code === "insufficient_scope") {
    text = "Your key isn't allowed to do that: " + sentence(err.message || "it lacks the scope");
  } else if (code === "service_unavailable" || res.status === 503) {
    text = "The service is temporarily unavailable \u2014 try again in a moment." + ref;
  } else if (code === "not_found") {
    text = "That key no longer exists \u2014 it may already have been revoked.";
  } else if (code === "invalid_request") {
    text = "Please check the form: " + sentence(err.message || "the service did not accept it");
  } else if (res.status >= 500) {
    text = "Something went wrong on the server \u2014 try again." + ref;
  } else {
    text = sentence(err.message || "Unexpected answer from the service (HTTP " + res.status + ")") + ref;
  }
  return new Problem(text, code, res.status);
}

function handle(p) {
  if (!(p instanceof Problem)) p = new Problem("Something went wrong in the dashboard: " + ((p && p.message) || p), "bug", 0);
  if (p.status === 401) signOut(p.message);
  else fail(p.message);
  return p;
}

// ---- session ----
function signOut(message) {
  key = null;
  keys = [];
  ownId = null;
  ownScopes = [];
  store(null);
  for (const d of [ui.secretDialog, ui.revokeDialog]) if (d.open) d.close();
  ui.keysBody.replaceChildren();
  ui.createScopes.replaceChildren();
  ui.usageStats.replaceChildren();
  ui.usageMeter.replaceChildren();
  ui.usageGroups.replaceChildren();
  daily.data = null;
  for (const el of [daily.chart, daily.legend, daily.table]) el.replaceChildren();
  daily.summary.textContent = "";
  ui.whoKey.textContent = "";
  ui.usageKey.textContent = "";
  route(true);
  if (message) fail(message);
  else say("Signed out: the key was removed from this tab.");
}

ui.signinForm.addEventListener("submit", async (e) => {
  e.preventDefault();
  quiet();
  const candidate = ui.signinKey.value.trim();
  if (!KEY_RE.test(candidate)) {
    ui.signinKey.setAttribute("aria-invalid", "true");
    fail("That isn't a Quarry API key: it should be qry_ followed by 64 lowercase hexadecimal characters.");
    ui.signinKey.focus();
    return;
  }
  key = candidate;
  busy(ui.signinSubmit, true);
  try {
    await loadKeys();
  } catch (p) {
    key = null;
    ui.signinKey.setAttribute("aria-invalid", "true");
    fail(p instanceof Problem && p.code === "insufficient_scope" ? MSG.noKeysScope : handleless(p));
    ui.signinKey.focus();
    return;
  } finally {
    busy(ui.signinSubmit, false);
  }
  ui.signinKey.removeAttribute("aria-invalid");
  ui.signinKey.value = "";
  store(key);
  signedIn();
  route(true, "keys");
});
function handleless(p) {
  return p instanceof Problem ? p.message : "Something went wrong in the dashboard: " + ((p && p.message) || p);
}
function signedIn() {
  ui.whoKey.textContent = mask(key);
  ui.usageKey.textContent = mask(key);
}
$("signout").addEventListener("click", () => signOut());

// ---- routing ----
const LOADERS = { keys: loadKeys, usage: loadUsage, collections: loadCollections, health: loadHealth };

function show(view, focus) {
  for (const s of document.querySelectorAll("section.view")) s.hidden = s.dataset.view !== view;
  ui.nav.hidden = ui.who.hidden = view === "signin";
  for (const a of ui.nav.querySelectorAll("a")) {
    if (a.dataset.view === view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  document.title = (VIEWS[view] || "Sign in") + " \u00b7 Quarry dashboard";
  if (focus) {
    const heading = document.querySelector("#view-" + view + " h1");
    if (heading) heading.focus();
  }
}

/** Shows the view named by the hash; "loaded" names a view whose data is already fresh. */
async function route(focus, loaded) {
  if (!key) return show("signin", focus);
  const name = location.hash.replace(/^#\/?/, "");
  const view = Object.prototype.hasOwnProperty.call(VIEWS, name) ? name : "keys";
  show(view, focus);
  if (view === loaded) return;
  const section = $("view-" + view);
  section.setAttribute("aria-busy", "true");
  try {
    await LOADERS[view]();
  } catch (p) {
    handle(p);
  } finally {
    section.removeAttribute("aria-busy");
  }
}
window.addEventListener("hashchange", () => {
  quiet();
  route(true);
});
for (const b of document.querySelectorAll("[data-refresh]")) {
  b.addEventListener("click", async () => {
    quiet();
    busy(b, true);
    try {
      await LOADERS[b.dataset.refresh]();
      say("Updated.");
    } catch (p) {
      handle(p);
    } finally {
      busy(b, false);
    }
  });
}

// ---- keys ----
async function loadKeys() {
  const data = await call("GET", "/v1/keys");
  keys = Array.isArray(data && data.keys) ? data.keys : [];
  const own = keys.find((k) => k.prefix === mask(key));
  ownId = own ? own.id : null;
  // Unknown only if the key's mask is ambiguous; the API still refuses any escalation.
  const scopes = Object.keys(SCOPES).filter((s) => (own ? own.scopes.includes(s) : true));
  if (scopes.join() !== ownScopes.join()) {
    ownScopes = scopes;
    renderScopeChoices();
  }
  renderKeys();
}

function renderKeys() {
  // The API lists only keys within the signed-in key's scopes (stronger ones are hidden), so say so.
  ui.keysCount.textContent = (keys.length === 1 ? "1 active key" : keys.length + " active keys") + " within this key's scopes";
  ui.keysBody.replaceChildren(...keys.map((k) => h("tr", {},
    h("td", { "data-label": "Name" }, h("span", {}, h("span", { class: "name", text: k.name }),
      k.id === ownId ? h("span", { class: "tag", text: "signed in" }) : null)),
    h("td", { "data-label": "Key" }, h("code", { text: k.prefix })),
    h("td", { "data-label": "Scopes" }, h("ul", { class: "chips" }, k.scopes.map((s) => h("li", { text: s })))),
    h("td", { "data-label": "Created" }, time(k.created_at)),
    h("td", { "data-label": "Last used" }, k.last_used_at ? time(k.last_used_at) : h("span", { class: "muted", text: "never" })),
    h("td", { class: "act" }, h("button", {
      type: "button", class: "danger small", "aria-label": "Revoke key " + k.name,
      onclick: () => askRevoke(k),
    }, "Revoke")),
  )));
}

function renderScopeChoices() {
  ui.createScopes.replaceChildren(...ownScopes.map((s) => h("label", { class: "check" },
    h("input", { type: "checkbox", value: s }),
    h("span", {}, h("strong", { text: s }), " \u2014 " + SCOPES[s]))));
}

ui.createForm.addEventListener("submit", async (e) => {
  e.preventDefault();
  quiet();
  const name = ui.createName.value.trim();
  const boxes = [...ui.createScopes.querySelectorAll("input[type=checkbox]")];
  const scopes = boxes.filter((b) => b.checked).map((b) => b.value);
  if (!name) {
    ui.createName.setAttribute("aria-invalid", "true");
    fail("Give the key a name, such as the app that will use it.");
    ui.createName.focus();
    return;
  }
  ui.createName.removeAttribute("aria-invalid");
  if (!scopes.length) {
    fail("Choose at least one scope for the new key.");
    if (boxes[0]) boxes[0].focus();
    return;
  }
  busy(ui.createSubmit, true);
  try {
    const created = await call("POST", "/v1/keys", { name, scopes });
    ui.createForm.reset();
    showSecret(created);
    say("Key \u201c" + created.name + "\u201d created.");
    await loadKeys();
  } catch (p) {
    handle(p);
  } finally {
    busy(ui.createSubmit, false);
  }
});

function showSecret(created) {
  ui.secretName.textContent = created.name;
  ui.secretValue.value = created.key;
  ui.secretCopied.textContent = "";
  ui.secretDialog.showModal();
  ui.secretValue.focus();
  ui.secretValue.select();
}
ui.secretCopy.addEventListener("click", async () => {
  const value = ui.secretValue.value;
  try {
    await navigator.clipboard.writeText(value);
    ui.secretCopied.textContent = "Copied to the clipboard.";
  } catch (e) {
    ui.secretValue.focus();
    ui.secretValue.select();
    let copied = false;
    try { copied = document.execCommand("copy"); } catch (e2) { copied = false; }
    ui.secretCopied.textContent = copied
      ? "Copied to the clipboard."
      : "The browser blocked copying: the key is selected, press Ctrl+C (\u2318C on a Mac).";
  }
});
function forgetSecret() {
  ui.secretValue.value = "";
  ui.secretName.textContent = "";
  ui.secretCopied.textContent = "";
}
// The button clears the secret at once: the dialog's "close" event comes a task later.
ui.secretDone.addEventListener("click", () => {
  forgetSecret();
  ui.secretDialog.close();
});
// However else the dialog closes (Esc), the secret leaves the page with it.
ui.secretDialog.addEventListener("close", forgetSecret);

function askRevoke(k) {
  pendingRevoke = k;
  ui.revokeText.textContent = "\u201c" + k.name + "\u201d (" + k.prefix + ") stops working at once, for every app that uses it. This can't be undone.";
  ui.revokeSelf.hidden = k.id !== ownId;
  ui.revokeDialog.showModal();
  ui.revokeCancel.focus();
}
ui.revokeCancel.addEventListener("click", () => ui.revokeDialog.close());
ui.revokeDialog.addEventListener("close", () => { pendingRevoke = null; });
ui.revokeConfirm.addEventListener("click", async () => {
  const k = pendingRevoke;
  if (!k) return;
  busy(ui.revokeConfirm, true);
  try {
    await call("DELETE", "/v1/keys/" + encodeURIComponent(k.id));
    ui.revokeDialog.close();
    if (k.id === ownId) {
      signOut();
      say("Key \u201c" + k.name + "\u201d revoked. It was the key you were signed in with, so you have been signed out.");
      return;
    }
    say("Key \u201c" + k.name + "\u201d revoked.");
    ui.keysTitle.focus();
    await loadKeys();
  } catch (p) {
    if (ui.revokeDialog.open) ui.revokeDialog.close();
    handle(p);
    if (p instanceof Problem && p.code === "not_found") loadKeys().catch(handle);
  } finally {
    busy(ui.revokeConfirm, false);
  }
});

// ---- usage ----
async function loadUsage() {
  const [u, perDay] = await Promise.all([call("GET", "/v1/usage"), call("GET", "/v1/usage/daily")]);
  daily.data = perDay;
  renderDaily();
  const stat = (label, value, small) => [h("div", { class: "stat" }, h("dt", { text: label }),
    h("dd", {}, value, small ? h("small", { text: small }) : null))];
  const reset = new Date(u.reset_at);
  const unlimited = u.quota === null;
  ui.usageStats.replaceChildren(
    ...stat("Plan", u.plan.charAt(0).toUpperCase() + u.plan.slice(1)),
    ...stat("Monthly quota", unlimited ? "Unlimited" : num(u.quota)),
    ...stat("Used", num(u.used)),
    ...stat("Remaining", u.remaining === null ? "Unlimited" : num(u.remaining)),
    ...(Number.isNaN(reset.getTime()) ? stat("Resets", String(u.reset_at))
      : stat("Resets", reset.toLocaleDateString(undefined, { dateStyle: "medium" }), reset.toLocaleTimeString(undefined, { timeStyle: "short" }))),
    ...stat("Per-minute limit", num(u.per_minute_limit) + " / min"),
  );
  const share = unlimited ? 0 : u.quota ? u.used / u.quota : 1;
  ui.usageMeter.replaceChildren(
    h("p", { class: "meter-label", text: unlimited
      ? num(u.used) + " requests this month; the plan has no monthly quota."
      : num(u.used) + " of " + num(u.quota) + " requests used this month (" + Math.round(share * 100) + "%)." }),
    bar(share),
  );
  if (!unlimited && share >= 0.9) ui.usageMeter.classList.add("high");
  else ui.usageMeter.classList.remove("high");
  const groups = Object.entries(u.endpoints || {});
  const max = Math.max(1, ...groups.map(([, n]) => n));
  ui.usageGroups.replaceChildren(...groups.map(([g, n]) => h("li", {},
    h("span", { class: "bar-name", text: g }),
    h("span", { class: "bar-count", text: num(n) }),
    bar(n / max))));
}

// ---- collections ----
/** Bytes as people read them: 980 B, 12.3 kB, 4.5 MB (powers of 1000, as the API's limits are written). */
function size(n) {
  const b = Number(n) || 0;
  if (b < 1000) return b + " B";
  const units = ["kB", "MB", "GB", "TB"];
  let v = b / 1000;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return (v >= 100 ? Math.round(v) : v.toFixed(1)) + " " + units[i];
}
async function loadCollections() {
  const count = $("collections-count");
  const body = $("collections-body");
  let data;
  try {
    data = await call("GET", "/v1/collections");
  } catch (p) {
    // A key without the scrape scope, or a server on memory storage: said in the view, not as an error.
    if (p instanceof Problem && (p.code === "insufficient_scope" || p.code === "service_unavailable")) {
      count.textContent = p.code === "insufficient_scope" ? "Listing collections needs a key with the scrape scope." : p.message;
      body.replaceChildren();
      return;
    }
    throw p;
  }
  const list = Array.isArray(data && data.collections) ? data.collections : [];
  const docs = list.reduce((s, c) => s + Number(c.documents || 0), 0);
  const bytes = list.reduce((s, c) => s + Number(c.bytes || 0), 0);
  count.textContent = list.length === 0 ? "This account has no collection yet."
    : num(list.length) + (list.length === 1 ? " collection, " : " collections, ") + num(docs) + (docs === 1 ? " document, " : " documents, ") + size(bytes) + " of text in all.";
  body.replaceChildren(...list.map((c) => h("tr", {},
    h("th", { scope: "row" }, h("code", { text: c.name }), c.description ? h("small", { class: "muted", text: " " + c.description }) : null),
    h("td", { class: "num", text: num(c.documents) }),
    h("td", { class: "num", text: num(c.passages) }),
    h("td", { class: "num", title: num(c.bytes) + " bytes", text: size(c.bytes) }),
    h("td", { text: when(c.updated_at) }))));
}

// ---- health ----
const STATUS_TEXT = {
  ok: "All systems operational",
  degraded: "Degraded: some optional parts are down",
  unavailable: "Unavailable: a critical service is down",
};
function badge(status) {
  const good = status === "ok", off = status === "disabled" || status === "unknown";
  return h("span", { class: "badge " + (good ? "good" : off ? "off" : "bad") },
    h("span", { "aria-hidden": "true", text: good ? "\u2713 " : off ? "\u2013 " : "\u2715 " }), status);
}
function describeService(name, s) {
  if (s.status === "disabled" && name === "browser") return "No browser: pages are read without rendering." + (s.error ? " " + s.error : "");
  if (s.status === "disabled") return name === "metasearch" ? "Not configured (no SearXNG URL set)." : "Not configured.";
  const parts = [];
  if (name === "browser" && s.max_pages !== undefined) parts.push(num(s.pages_in_use || 0) + " of " + num(s.max_pages) + " pages rendering");
  if (name === "database" && s.latency_ms !== undefined) parts.push(s.latency_ms + " ms round trip");
  if (name === "limits") parts.push("rate-limit windows and quota counts, in " + (s.store === "redis" ? "Redis (" + s.latency_ms + " ms)" : "the database"));
  if (name === "cache" && s.entries !== undefined) parts.push(num(s.entries) + " entries, " + s.size_mb + " MB");
  if (name === "intelligence" && s.sources_tracked !== undefined) parts.push(num(s.sources_tracked) + (s.sources_tracked === 1 ? " source" : " sources") + " tracked");
  if (s.url) parts.push(s.url);
  if (s.latency_ms !== undefined && name === "metasearch") parts.push(s.latency_ms + " ms");
  if (s.error) parts.push(s.error);
  return parts.join(" \u00b7 ");
}
async function loadHealth() {
  const hl = await call("GET", "/health");
  const status = String(hl.status);
  ui.healthBanner.className = "banner banner-" + (status === "ok" ? "good" : status === "degraded" ? "warn" : "bad");
  ui.healthBanner.replaceChildren(h("span", { class: "dot", "aria-hidden": "true" }), h("strong", { text: STATUS_TEXT[status] || status }),
    h("span", { class: "sr-only", text: " (status: " + status + ")" }));
  ui.healthMeta.textContent = "Version " + hl.version + " \u00b7 up " + duration(hl.uptime_secs) + " \u00b7 checked " + when(hl.timestamp);
  const services = hl.services || {};
  ui.healthServices.replaceChildren(...["database", "limits", "cache", "metasearch", "intelligence", "browser"].filter((n) => services[n]).map((n) =>
    h("li", { class: "card service" }, h("h2", { text: n }), badge(String(services[n].status)),
      h("p", { class: "muted", text: describeService(n, services[n]) }))));
  // services.backends is always there (the top-level backends key is left out when degraded).
  const backends = (services.backends && services.backends.detail) || hl.backends;
  if (!backends) {
    ui.healthBackends.replaceChildren(h("p", { class: "muted", text: "This server does not report its backends." }));
  } else if (!Object.keys(backends).length) {
    ui.healthBackends.replaceChildren(h("p", { class: "muted", text: "No search backend has served traffic yet." }));
  } else {
    ui.healthBackends.replaceChildren(h("table", { class: "plain" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Backend" }), h("th", { scope: "col", text: "Status" }), h("th", { scope: "col", text: "Success rate" }))),
      h("tbody", {}, Object.entries(backends).map(([name, b]) => h("tr", {},
        h("th", { scope: "row", text: name }), h("td", {}, badge(String(b.status))),
        h("td", { text: b.status === "disabled" ? "\u2013" : !b.calls ? "no traffic" : Math.round(Number(b.success_rate) * 100) + "% of " + num(b.calls) }))))));
  }
}
${DAILY_CHART_JS}
// ---- start ----
{
  let saved = null;
  try { saved = sessionStorage.getItem(STORE); } catch (e) { saved = null; }
  if (saved && KEY_RE.test(saved)) {
    key = saved;
    signedIn();
  } else if (saved) {
    store(null);
  }
  route(false);
}
`;
