/**
 * The dashboard's HTML shell: static markup only (no data, no inline script or style, so the
 * strict CSP holds). app.js fills the views from the public API.
 */
export function dashboardHtml(assets: { script: string; style: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>Quarry dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.style}">
<script type="module" src="${assets.script}"></script>
</head>
<body>
<header class="top">
  <p class="brand"><span class="logo" aria-hidden="true"></span>Quarry <span class="muted">dashboard</span></p>
  <nav id="nav" aria-label="Dashboard" hidden>
    <ul>
      <li><a href="#/keys" data-view="keys">Keys</a></li>
      <li><a href="#/usage" data-view="usage">Usage</a></li>
      <li><a href="#/collections" data-view="collections">Collections</a></li>
      <li><a href="#/health" data-view="health">Health</a></li>
    </ul>
  </nav>
  <div id="who" class="who" hidden>
    <span class="muted">Signed in with</span> <code id="who-key"></code>
    <button type="button" id="signout">Sign out</button>
  </div>
</header>
<main id="main">
  <noscript><p class="msg msg-error">The dashboard needs JavaScript.</p></noscript>
  <p id="error" class="msg msg-error" role="alert"></p>
  <p id="notice" class="msg msg-ok" role="status"></p>

  <section id="view-signin" data-view="signin" class="view narrow" aria-labelledby="signin-title" hidden>
    <h1 id="signin-title" tabindex="-1">Sign in</h1>
    <p>Paste an API key that has the <strong>keys</strong> scope. It is kept only in this browser tab
      (session storage) and sent only to this service's API. Closing the tab or signing out forgets it.</p>
    <form id="signin-form" class="card" novalidate>
      <label for="signin-key">API key</label>
      <input id="signin-key" type="password" autocomplete="off" spellcheck="false" autocapitalize="off"
        placeholder="qry_…" aria-describedby="signin-hint" required>
      <p id="signin-hint" class="hint">qry_ followed by 64 hexadecimal characters. The operator creates the
        first one with <code>quarry keys create</code>.</p>
      <button type="submit" class="primary" id="signin-submit">Sign in</button>
    </form>
  </section>

  <section id="view-keys" data-view="keys" class="view" aria-labelledby="keys-title" hidden>
    <div class="view-head">
      <h1 id="keys-title" tabindex="-1">API keys</h1>
      <p id="keys-count" class="muted"></p>
    </div>
    <div class="table-wrap">
      <table class="keys">
        <caption class="sr-only">Active keys of your account, newest first</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th>
          <th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody id="keys-body"></tbody>
      </table>
    </div>
    <form id="create-form" class="card" novalidate aria-labelledby="create-title">
      <h2 id="create-title">Create a key</h2>
      <label for="create-name">Name</label>
      <input id="create-name" type="text" maxlength="100" autocomplete="off" aria-describedby="create-name-hint" required>
      <p id="create-name-hint" class="hint">A label to recognise it by, such as the app that will use it.</p>
      <fieldset>
        <legend>Scopes</legend>
        <p class="hint" id="create-scopes-hint">A key can only grant scopes that the key you signed in with has.</p>
        <div id="create-scopes" class="checks"></div>
      </fieldset>
      <button type="submit" class="primary" id="create-submit">Create key</button>
    </form>
  </section>

  <section id="view-usage" data-view="usage" class="view" aria-labelledby="usage-title" hidden>
    <div class="view-head">
      <h1 id="usage-title" tabindex="-1">Usage</h1>
      <button type="button" class="refresh" data-refresh="usage">Refresh</button>
    </div>
    <p class="hint">This month's use of the key you signed in with (<code id="usage-key"></code>): limits and
      quota are counted per key, under your account's plan.</p>
    <dl id="usage-stats" class="stats"></dl>
    <div id="usage-meter" class="card meter"></div>
    <div class="card">
      <h2>Requests by operation group</h2>
      <ul id="usage-groups" class="bars"></ul>
    </div>
    <div class="card">
      <div class="chart-head">
        <h2 id="daily-title">Requests per day</h2>
        <div id="daily-modes" class="modes" role="group" aria-label="Show the requests per day">
          <button type="button" class="small" data-mode="keys" aria-pressed="true">By key</button>
          <button type="button" class="small" data-mode="groups" aria-pressed="false">By operation group (this key)</button>
        </div>
      </div>
      <figure class="daily" aria-labelledby="daily-title">
        <div id="daily-chart"></div>
        <figcaption id="daily-summary"></figcaption>
        <ul id="daily-legend" class="legend" aria-label="Legend"></ul>
      </figure>
      <details class="daily-data">
        <summary>Show the figures as a table</summary>
        <div class="table-wrap"><table id="daily-table" class="plain daily-table"></table></div>
      </details>
      <p class="hint">Days in UTC. A request counts on the day it was admitted; refused requests and server errors count on none.</p>
    </div>
  </section>

  <section id="view-collections" data-view="collections" class="view" aria-labelledby="collections-title" hidden>
    <div class="view-head">
      <h1 id="collections-title" tabindex="-1">Collections</h1>
      <button type="button" class="refresh" data-refresh="collections">Refresh</button>
    </div>
    <p class="hint">The account's own search indexes, filled by scrape, crawl and batch scrape with
      <code>collection</code> or by sending documents, and searched without a web engine
      (<a href="/docs">API reference</a>, Collections). Size is the text each holds.</p>
    <p id="collections-count" class="muted"></p>
    <div class="table-wrap collections"><table id="collections-table" class="plain">
      <thead><tr><th scope="col">Collection</th><th scope="col" class="num">Documents</th><th scope="col" class="num">Passages</th><th scope="col" class="num">Size</th><th scope="col">Updated</th></tr></thead>
      <tbody id="collections-body"></tbody>
    </table></div>
  </section>

  <section id="view-health" data-view="health" class="view" aria-labelledby="health-title" hidden>
    <div class="view-head">
      <h1 id="health-title" tabindex="-1">Health</h1>
      <button type="button" class="refresh" data-refresh="health">Refresh</button>
    </div>
    <p id="health-banner" class="banner"></p>
    <p id="health-meta" class="muted"></p>
    <ul id="health-services" class="services"></ul>
    <div class="card">
      <h2>Search backends</h2>
      <div id="health-backends"></div>
    </div>
    <p class="muted">Every endpoint, its fields and its errors: <a href="/docs">API reference</a> (from <a href="/openapi.json">openapi.json</a>).</p>
  </section>
</main>

<dialog id="secret-dialog" aria-labelledby="secret-title" aria-describedby="secret-warning">
  <h2 id="secret-title">Your new key</h2>
  <p id="secret-warning" class="warn"><strong>Copy it now.</strong> This is the only time the full key is shown:
    it won't be shown again, not even to you. If you lose it, revoke it and create a new one.</p>
  <label for="secret-value">Secret of <span id="secret-name"></span></label>
  <div class="secret-row">
    <textarea id="secret-value" rows="2" readonly spellcheck="false" autocomplete="off" autocapitalize="off"></textarea>
    <button type="button" id="secret-copy">Copy</button>
  </div>
  <p id="secret-copied" class="hint" role="status"></p>
  <div class="actions"><button type="button" class="primary" id="secret-done">I've saved it, close</button></div>
</dialog>

<dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-text">
  <h2 id="revoke-title">Revoke this key?</h2>
  <p id="revoke-text"></p>
  <p id="revoke-self" class="warn" hidden>This is the key you are signed in with: you will be signed out.</p>
  <div class="actions">
    <button type="button" id="revoke-cancel">Cancel</button>
    <button type="button" class="danger" id="revoke-confirm">Revoke key</button>
  </div>
</dialog>
</body>
</html>
`;
}
