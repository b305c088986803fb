/**
 * A second corpus for `render: "auto"`, written WITHOUT reading its rule (core/extract/script-shell.ts)
 * and with every page's expectation fixed before the first run: the page shapes of real frameworks and
 * sites (Nuxt, Angular, SvelteKit, Gatsby, Docusaurus, AMP, WordPress, Blazor, Astro, forums, shops,
 * walls and teasers), none of them one of the 14 kinds of bench/render/corpus.ts. `render` says whether
 * the useful text appears only after the page's scripts run (then a browser is needed); `text` is a
 * sentence the answer must hold, `absent` one it must not. Served like the first corpus
 * (startCorpusSite(host, BLIND_ROUTES)); measured by `npx tsx bench/render/auto.ts --corpus blind`.
 */
import type { CorpusPage, CorpusRoutes } from "./corpus.ts";

const OBS = [
  "The observatory on Mount Carrow reopened this spring after a volunteer crew spent two winters rebuilding its copper dome.",
  "Its telescope, a refractor ground by hand in 1898, had been stored in a barn while the frame of the dome was straightened.",
  "Astronomers from the university now book the instrument for variable-star work on clear nights between October and April.",
  "Schools in the valley bring pupils on Thursday evenings, when the warden opens the slit and lets each child find Saturn.",
  "The rebuilding cost less than a tenth of the first estimate because a retired shipwright offered to shape the copper plates.",
];
const ps = (lines: string[]) => lines.map((p) => `<p>${p}</p>`).join("\n");
const ARTICLE = `<article><h1>The dome on Mount Carrow</h1><p class="byline">By Ana Reyes · 12 March</p>\n${ps(OBS)}</article>`;
/** Client-side code that puts the article (from `src`, a JS expression giving { title, body }) into `target`. */
const fill = (target: string, src: string) =>
  `Promise.resolve(${src}).then((d) => { ${target}.innerHTML = "<article><h1>" + d.title + "</h1>" + d.body.map((p) => "<p>" + p + "</p>").join("") + "</article>"; });`;
const API = { title: "The dome on Mount Carrow", body: OBS };
const fetched = `fetch("/api/observatory").then((r) => r.json())`;
const SITE_NAV = `<header class="site-header"><a class="logo" href="/">Valley Courier</a><nav>${["Home", "Local", "Science", "Schools", "Sport", "Weather", "Opinion", "Obituaries", "Podcasts", "Puzzles", "Subscribe", "Sign in"]
  .map((n) => `<a href="/${n.toLowerCase().replace(" ", "-")}">${n}</a>`).join("")}</nav></header>`;
const SITE_FOOTER = `<footer class="site-footer"><p>The Valley Courier has reported on the towns and farms of the upper valley since 1874 and is owned by a charitable trust.</p>
<p>Our newsroom follows the editors' code of practice; to raise a complaint about something we published, write to the readers' editor.</p>
<ul>${["About", "Contact", "Advertise", "Complaints", "Privacy", "Cookie settings", "Terms", "Archive", "Careers", "RSS"].map((n) => `<li><a href="/${n.toLowerCase()}">${n}</a></li>`).join("")}</ul>
<p>© Valley Courier Trust</p></footer>`;
const GTM = `<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});var f=d.getElementsByTagName(s)[0],j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;j.src='https://www.googletagmanager.com/gtm.js?id='+i+dl;f.parentNode.insertBefore(j,f);})(window,document,'script','dataLayer','GTM-BLIND1');</script>`;
/** A chunk of minified-looking inline configuration of about `n` entries (frameworks ship such state). */
const bigConfig = (name: string, n: number) =>
  `window.${name} = ${JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}_${name.toLowerCase()}`, { id: i, flag: i % 3 === 0, label: `option-${i}`, path: `/assets/chunk-${i.toString(36)}.js` }])))};`;
const doc = (body: string, head = "", title = "The dome on Mount Carrow | Valley Courier", htmlAttrs = 'lang="en"') =>
  `<!DOCTYPE html><html ${htmlAttrs}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title>${head}</head><body>${body}</body></html>`;

const pages: CorpusRoutes["pages"] = {};
const js: CorpusRoutes["js"] = {};
const json: CorpusRoutes["json"] = { "/api/observatory": API };
const add = (page: CorpusPage, html: string) => { pages[page.path] = { html, page }; };

// 1. Nuxt 2 server-rendered: the article is in #__nuxt, and window.__NUXT__ repeats it with the store.
add({ path: "/b/nuxt-ssr", kind: "Nuxt SSR page with a large window.__NUXT__ state", render: false, text: OBS[2]! },
  doc(`<div data-server-rendered="true" id="__nuxt"><div id="__layout"><div class="layout">${SITE_NAV}<main>${ARTICLE}</main>${SITE_FOOTER}</div></div></div>
<script>window.__NUXT__=(function(a,b,c){return {layout:"default",data:[{article:{title:a,body:${JSON.stringify(OBS)},tags:[b,c]}}],fetch:{},error:null,state:{menu:{open:false},user:null},serverRendered:true,routePath:"/science/dome"}}("The dome on Mount Carrow","science","astronomy"));</script>
<script>${bigConfig("__NUXT_CONFIG__", 60)}</script>
<script src="/_nuxt/runtime.js" defer></script><script src="/_nuxt/commons/app.js" defer></script><script src="/_nuxt/app.js" defer></script>`,
  `<link rel="preload" href="/_nuxt/runtime.js" as="script"><link rel="preload" href="/_nuxt/app.js" as="script">`));
js["/_nuxt/runtime.js"] = `window.__nuxtRuntime = 1;`;
js["/_nuxt/commons/app.js"] = `window.__nuxtCommons = 1;`;
js["/_nuxt/app.js"] = `document.documentElement.dataset.nuxtHydrated = "1";`;

// 2. Nuxt in SPA mode: a loading indicator in #__nuxt, config-only __NUXT__, the app fetches the article.
add({ path: "/b/nuxt-spa", kind: "Nuxt SPA mode: #__nuxt loading indicator, config-only __NUXT__", render: true, text: OBS[3]!, absent: "Loading..." },
  doc(`<div id="__nuxt"><style>#nuxt-loading{background:#fff;visibility:hidden;opacity:0;position:absolute;left:0;right:0;top:0;bottom:0}</style><div id="nuxt-loading" aria-live="polite" role="status"><div>Loading...</div></div></div>
<script>window.__NUXT__={config:{_app:{basePath:"/",assetsPath:"/_nuxt/",cdnURL:null}}}</script><script src="/_nuxt/spa-app.js"></script>`));
js["/_nuxt/spa-app.js"] = fill(`document.getElementById("__nuxt")`, fetched);

// 3. Angular CLI build: an empty <app-root> and three module bundles.
add({ path: "/b/angular", kind: "Angular CLI shell: empty <app-root>, module bundles", render: true, text: OBS[0]! },
  doc(`<app-root></app-root><noscript>Please enable JavaScript to continue using this application.</noscript>
<script src="/ng/runtime.js" type="module"></script><script src="/ng/polyfills.js" type="module"></script><script src="/ng/main.js" type="module"></script>`,
  `<base href="/"><link rel="icon" type="image/x-icon" href="favicon.ico"><link rel="stylesheet" href="/ng/styles.css">`, "Valley Courier"));
js["/ng/runtime.js"] = `window.ngRuntime = 1;`;
js["/ng/polyfills.js"] = `window.ngPolyfills = 1;`;
js["/ng/main.js"] = fill(`document.querySelector("app-root")`, fetched);

// 4. Angular SSR (Universal / hydration): the article inside <app-root ng-server-context="ssr">, state in ng-state.
add({ path: "/b/angular-ssr", kind: "Angular SSR: rendered <app-root> plus ng-state JSON", render: false, text: OBS[4]! },
  doc(`<app-root ng-version="17.3.1" ngh="0" ng-server-context="ssr"><app-header>${SITE_NAV}</app-header><main><app-article>${ARTICLE}</app-article></main><app-footer>${SITE_FOOTER}</app-footer></app-root>
<script id="ng-state" type="application/json">${JSON.stringify({ "article-dome": { b: API, h: {}, s: 200, st: "OK", u: "/api/observatory", rt: "json" }, __nghData__: [{ t: { 2: "t0" }, c: { 2: [] } }] })}</script>
<script src="/ng/runtime.js" type="module"></script><script src="/ng/polyfills.js" type="module"></script><script src="/ng/main-ssr.js" type="module"></script>`));
js["/ng/main-ssr.js"] = `document.documentElement.dataset.ngHydrated = "1";`;

// 5. SvelteKit with ssr = false: an empty display:contents div, the page data inline in the start script.
const kitData = JSON.stringify([null, { type: "data", data: { article: API }, uses: {} }]);
add({ path: "/b/sveltekit-csr", kind: "SvelteKit CSR: empty body div, page data in the start script", render: true, text: OBS[1]! },
  doc(`<div style="display: contents">
<script>{ __sveltekit_1b2c3d = { base: new URL(".", location).pathname.slice(0, -1) }; const element = document.currentScript.parentElement; const data = ${kitData};
Promise.all([import("/_app/immutable/entry/start.js"), import("/_app/immutable/entry/app.js")]).then(([kit, app]) => { kit.start(app, element, { node_ids: [0, 2], data, form: null }); }); }</script>
</div>`, `<link rel="modulepreload" href="/_app/immutable/entry/start.js"><link rel="modulepreload" href="/_app/immutable/entry/app.js">`));
js["/_app/immutable/entry/start.js"] = `export function start(app, element, opts) { const d = opts.data[1].data.article; ${fill("element", "d")} }`;
js["/_app/immutable/entry/app.js"] = `export const nodes = [];`;

// 6. SvelteKit server-rendered: the same start script, the article already in the div.
add({ path: "/b/sveltekit-ssr", kind: "SvelteKit SSR: article in the body div, data repeated in the start script", render: false, text: OBS[3]! },
  doc(`<div style="display: contents">${SITE_NAV}<main>${ARTICLE}</main>${SITE_FOOTER}
<script>{ __sveltekit_9z8y = { base: new URL(".", location).pathname.slice(0, -1) }; const element = document.currentScript.parentElement; const data = ${kitData};
Promise.all([import("/_app/immutable/entry/hydrate.js")]).then(([kit]) => { kit.start(element, { node_ids: [0, 2], data, form: null }); }); }</script>
</div>`));
js["/_app/immutable/entry/hydrate.js"] = `export function start(element) { element.dataset.hydrated = "1"; }`;

// 7. Gatsby: static HTML in #___gatsby, a page-data loader, a large chunk map and several async bundles.
add({ path: "/b/gatsby", kind: "Gatsby SSR page with chunk map and async bundles", render: false, text: OBS[0]! },
  doc(`<div id="___gatsby"><div style="outline:none" tabindex="-1" id="gatsby-focus-wrapper">${SITE_NAV}<main>${ARTICLE}</main>${SITE_FOOTER}</div><div id="gatsby-announcer" style="position:absolute;top:0;width:1px;height:1px;padding:0;overflow:hidden;clip:rect(0, 0, 0, 0);white-space:nowrap;border:0" aria-live="assertive" aria-atomic="true"></div></div>
<script id="gatsby-script-loader">/*<![CDATA[*/window.pagePath="/science/dome/";window.___webpackCompilationHash="5c1b2a9e0d";/*]]>*/</script>
<script id="gatsby-chunk-mapping">/*<![CDATA[*/${bigConfig("___chunkMapping", 120)}/*]]>*/</script>
<script src="/gatsby/polyfill.js" nomodule></script><script src="/gatsby/component---src-templates-article-js.js" async></script><script src="/gatsby/framework.js" async></script><script src="/gatsby/app.js" async></script>`,
  `<style data-href="/styles.css" data-identity="gatsby-global-css">${".c{margin:0 auto;max-width:42rem}".repeat(80)}</style><link as="fetch" rel="preload" href="/page-data/science/dome/page-data.json" crossorigin="anonymous">`));
for (const f of ["polyfill", "component---src-templates-article-js", "framework", "app"]) js[`/gatsby/${f}.js`] = `window["${f}"] = 1;`;

// 8. React SSR article with a "Read more" button: the first part is static, the rest needs a click.
add({ path: "/b/read-more", kind: "React SSR article, rest behind a \"Read more\" click", render: false, text: OBS[1]! },
  doc(`<div id="root">${SITE_NAV}<main><article><h1>The dome on Mount Carrow</h1>${ps(OBS.slice(0, 2))}<div id="more" hidden></div><button id="read-more" aria-expanded="false">Read more</button></article></main>${SITE_FOOTER}</div>
<script>window.__INITIAL_STATE__ = {"route":"/science/dome","teaser":true,"user":null};</script><script src="/react/vendor.js" defer></script><script src="/react/article.js" defer></script>`));
js["/react/vendor.js"] = `window.React = {};`;
js["/react/article.js"] = `document.getElementById("read-more").addEventListener("click", () => ${fill(`document.getElementById("more")`, fetched).replace(/;$/, "")});`;

// 9. A Docusaurus-like docs page: static, long sidebar, an inline theme script and deferred bundles.
const DOC = [
  "The cache directory holds every downloaded package until the next garbage collection, which runs once a day by default.",
  "Set cacheDir in the configuration file to move it, for example onto a larger disk; relative paths are resolved from the project root.",
  "Entries older than maxAge are removed first, then the least recently used ones until the directory is below maxSize.",
  "Running the clean command empties the cache at once; it never touches packages that a running build has locked.",
];
add({ path: "/b/docs", kind: "Docusaurus-like docs page: static, many scripts", render: false, text: DOC[2]! },
  doc(`<script>!function(){function t(t){document.documentElement.setAttribute("data-theme",t)}var e=function(){try{return new URLSearchParams(window.location.search).get("docusaurus-theme")}catch(t){}}()||function(){try{return localStorage.getItem("theme")}catch(t){}}();t(null!==e?e:"light")}()</script>
<div id="__docusaurus"><nav class="navbar"><a class="navbar__brand" href="/">Packrat</a><a href="/docs">Docs</a><a href="/api">API</a><a href="/blog">Blog</a><a href="https://github.com/">GitHub</a></nav>
<div class="main-wrapper"><aside class="theme-doc-sidebar-container"><ul class="menu__list">${["Introduction", "Installation", "Quick start", "Configuration", "Cache", "Lockfiles", "Workspaces", "Scripts", "Publishing", "Registries", "Authentication", "Proxies", "Offline mode", "CI", "Troubleshooting", "FAQ", "Migrating from v2", "Changelog"].map((n) => `<li class="menu__list-item"><a class="menu__link" href="/docs/${n.toLowerCase().replace(/ /g, "-")}">${n}</a></li>`).join("")}</ul></aside>
<main class="docMainContainer"><article><div class="theme-doc-markdown markdown"><header><h1>Cache</h1></header>${ps(DOC)}<pre><code>packrat clean --cache</code></pre></div></article>
<nav class="pagination-nav"><a href="/docs/configuration">Previous: Configuration</a><a href="/docs/lockfiles">Next: Lockfiles</a></nav></main></div>
<footer class="footer"><p>Copyright © Packrat contributors. Built with a static site generator.</p></footer></div>
<script src="/docs-assets/runtime~main.js" defer></script><script src="/docs-assets/main.js" defer></script>`,
  `<link rel="preload" href="/docs-assets/runtime~main.js" as="script"><link rel="preload" href="/docs-assets/main.js" as="script">`, "Cache | Packrat"));
js["/docs-assets/runtime~main.js"] = `window.__docusaurusRuntime = 1;`;
js["/docs-assets/main.js"] = `document.documentElement.dataset.docsReady = "1";`;

// 10. A shop's product page: title, breadcrumbs and chrome are static, price and description come by XHR.
const DESK = "Made from solid walnut with dovetailed drawers, the desk folds flat for moving and comes with a ten-year warranty on the frame.";
add({ path: "/b/product", kind: "product page: description and price loaded by XHR", render: true, text: DESK },
  doc(`${SITE_NAV.replace("Valley Courier", "Oak &amp; Pine")}<nav class="breadcrumbs"><a href="/">Home</a> › <a href="/furniture">Furniture</a> › <a href="/furniture/desks">Desks</a></nav>
<main class="product" data-sku="WD-1042"><h1>Walnut writing desk</h1><div class="rating" aria-label="4.6 out of 5">★★★★★ (212)</div><div id="price" class="price placeholder"></div>
<button class="add-to-basket" disabled>Add to basket</button><section id="description" class="description"><div class="spinner" role="progressbar"></div></section></main>${SITE_FOOTER}
<script src="/shop/product.js"></script>`, "", "Walnut writing desk | Oak & Pine"));
js["/shop/product.js"] = `const x = new XMLHttpRequest(); x.open("GET", "/api/product?sku=WD-1042"); x.onload = () => { const d = JSON.parse(x.responseText); document.getElementById("price").textContent = d.price; document.getElementById("description").innerHTML = "<h2>Description</h2>" + d.description.map((p) => "<p>" + p + "</p>").join(""); }; x.send();`;
json["/api/product"] = { price: "£349.00", description: [DESK, "The top measures 110 by 55 centimetres and is finished with a hard wax oil that can be refreshed at home.", "Assembly takes about twenty minutes with the tool supplied."] };

// 11. The body is a single iframe that holds the whole article (no scripts at all).
add({ path: "/b/iframe", kind: "body is only an iframe (static article inside)", render: false, text: OBS[2]! },
  doc(`<iframe src="/b/frame/dome" title="The dome on Mount Carrow" style="border:0;width:100%;height:100vh"></iframe>`));
pages["/b/frame/dome"] = { html: doc(`<main>${ARTICLE}</main>`) };

// 12. "Please enable JavaScript" page that also carries the full article inside <noscript>.
add({ path: "/b/noscript-article", kind: "enable-JavaScript notice with the full article in <noscript>", render: false, text: OBS[4]! },
  doc(`<div id="app"></div><noscript><p>Please enable JavaScript to use the interactive reader. The full article follows.</p>${ARTICLE}</noscript><script src="/reader/app.js"></script>`));
js["/reader/app.js"] = fill(`document.getElementById("app")`, fetched);

// 13. A paywall teaser: two static paragraphs, a subscribe box and the paywall vendor's scripts.
add({ path: "/b/paywall", kind: "paywall teaser (short static text, vendor scripts)", render: false, text: OBS[1]! },
  doc(`${SITE_NAV}<main><article><h1>The dome on Mount Carrow</h1>${ps(OBS.slice(0, 2))}</article>
<div class="paywall" id="paywall"><h2>Subscribe to keep reading</h2><p>Unlimited access for £1 a week. Cancel any time.</p><button>Subscribe</button><a href="/sign-in">Already a subscriber? Sign in</a></div></main>
<script src="https://cdn.paywall.example/api/paywall.min.js" async></script><script>window.pw = window.pw || []; pw.push(["setAid", "AbC123"]); pw.push(["setTags", ["science"]]); pw.push(["init"]);</script>${GTM}`));

// 14. A login wall: a static sign-in form, a validation script and a captcha loader.
add({ path: "/b/login", kind: "login wall (static sign-in form, scripts)", render: false, text: "You need to sign in to read the members' forum." },
  doc(`<header><a href="/">Valley Birders</a></header><main class="auth"><h1>Sign in</h1><p>You need to sign in to read the members' forum.</p>
<form method="post" action="/session"><label>Email <input type="email" name="email" required></label><label>Password <input type="password" name="password" required></label><button type="submit">Sign in</button></form>
<p><a href="/password/reset">Forgot your password?</a> · <a href="/join">Join the club</a></p></main>
<script src="https://www.google.com/recaptcha/api.js" async defer></script><script src="/auth/login.js"></script>`, "", "Sign in | Valley Birders"));
js["/auth/login.js"] = `document.querySelector("form").addEventListener("submit", (e) => { if (!e.target.checkValidity()) e.preventDefault(); });`;

// 15. The article in a <template>, stamped into the page by an inline script.
add({ path: "/b/template", kind: "article inside <template>, cloned in by script", render: true, text: OBS[3]! },
  doc(`${SITE_NAV}<template id="story">${ARTICLE}</template><main id="main"></main>${SITE_FOOTER}
<script>document.getElementById("main").append(document.getElementById("story").content.cloneNode(true));</script>`));

// 16. Web components: a custom element that fills its shadow DOM from an API.
add({ path: "/b/shadow", kind: "custom element filling its shadow DOM by script", render: true, text: OBS[0]! },
  doc(`${SITE_NAV}<main><obs-article src="/api/observatory"></obs-article></main>${SITE_FOOTER}<script type="module" src="/wc/obs-article.js"></script>`));
js["/wc/obs-article.js"] = `customElements.define("obs-article", class extends HTMLElement { connectedCallback() { const root = this.attachShadow({ mode: "open" }); fetch(this.getAttribute("src")).then((r) => r.json()).then((d) => { root.innerHTML = "<style>p{line-height:1.5}</style><article><h1>" + d.title + "</h1>" + d.body.map((p) => "<p>" + p + "</p>").join("") + "</article>"; }); } });`;

// 17. Server-rendered web components: declarative shadow DOM carries the article in the HTML.
add({ path: "/b/declarative-shadow", kind: "declarative shadow DOM (server-rendered web component)", render: false, text: OBS[2]! },
  doc(`${SITE_NAV}<main><obs-article><template shadowrootmode="open"><style>p{line-height:1.5}</style>${ARTICLE}</template></obs-article></main>${SITE_FOOTER}<script type="module" src="/wc/hydrate.js"></script>`));
js["/wc/hydrate.js"] = `customElements.define("obs-article", class extends HTMLElement {});`;

// 18. An AMP page: boilerplate that hides the body until the AMP runtime loads, the article static.
add({ path: "/b/amp", kind: "AMP article (boilerplate CSS, AMP runtime)", render: false, text: OBS[4]! },
  doc(`<header><a href="/">Valley Courier</a></header><main>${ARTICLE.replace("</h1>", '</h1><amp-img src="/img/dome.jpg" width="1200" height="800" layout="responsive" alt="The rebuilt dome"></amp-img>')}</main>
<amp-analytics type="gtag" data-credentials="include"><script type="application/json">{"vars":{"gtag_id":"G-AMP1","config":{"G-AMP1":{"groups":"default"}}}}</script></amp-analytics>`,
  `<script async src="https://cdn.ampproject.org/v0.js"></script><script async custom-element="amp-analytics" src="https://cdn.ampproject.org/v0/amp-analytics-0.1.js"></script><link rel="canonical" href="/science/dome">
<style amp-boilerplate>body{-webkit-animation:-amp-start 8s steps(1,end) 0s 1 normal both;animation:-amp-start 8s steps(1,end) 0s 1 normal both}@keyframes -amp-start{from{visibility:hidden}to{visibility:visible}}</style><noscript><style amp-boilerplate>body{-webkit-animation:none;animation:none}</style></noscript><style amp-custom>article{max-width:40rem}</style>`,
  "The dome on Mount Carrow | Valley Courier", 'lang="en" ⚡'));

// 19. A "not found" page served with status 200: short on purpose, with the site's bundle and analytics.
add({ path: "/b/not-found", kind: "short \"page not found\" page served 200, site bundle", render: false, text: "Sorry, we couldn't find the page you were looking for." },
  doc(`${SITE_NAV}<main class="error"><h1>Page not found</h1><p>Sorry, we couldn't find the page you were looking for.</p><p><a href="/">Go to the home page</a></p></main>${SITE_FOOTER}
<script src="/site/bundle.js" defer></script>`, GTM, "Page not found | Valley Courier"));
js["/site/bundle.js"] = `document.querySelectorAll("nav a").forEach((a) => a.addEventListener("mouseenter", () => a.classList.add("hover")));`;

// 20. An SPA whose only copy of the text in the HTML is JSON-LD for search engines.
add({ path: "/b/json-ld", kind: "SPA shell whose text is only in JSON-LD", render: true, text: OBS[1]! },
  doc(`<div id="root"></div><script src="/spa/main.js"></script>`,
  `<script type="application/ld+json">${JSON.stringify({ "@context": "https://schema.org", "@type": "NewsArticle", headline: API.title, datePublished: "2024-03-12", author: { "@type": "Person", name: "Ana Reyes" }, articleBody: OBS.join(" ") })}</script><meta name="description" content="${OBS[0]}">`));
js["/spa/main.js"] = fill(`document.getElementById("root")`, fetched);

// 21. A forum thread rendered on the server, with the forum software's large inline scripts.
const POSTS = [
  ["kestrel_jo", "Saw the pair of ospreys back on the reservoir platform this morning, about half past six, both looking in good condition."],
  ["M. Hartley", "Same here on Sunday. The ringed one is the female from 2021; you can read the blue ring with a decent scope from the hide."],
  ["wader_watch", "Please keep to the footpath on the east bank, the ranger says the new fencing is there to keep dogs away from the nest."],
  ["kestrel_jo", "Good point. I will post the ranger's map of the closed section once she sends it over, probably by the weekend."],
  ["alder", "First egg reported yesterday by the live camera team, so the closure will likely stay until the end of July."],
];
add({ path: "/b/forum", kind: "server-rendered forum thread with heavy inline JS", render: false, text: POSTS[2]![1]! },
  doc(`<script>document.documentElement.className += " has-js"; window.XF = window.XF || {}; XF.ready = function(f){ document.readyState !== "loading" ? f() : document.addEventListener("DOMContentLoaded", f); }; XF.activate = function(){};</script>
<header><a href="/">Valley Birders</a><nav><a href="/forums">Forums</a><a href="/whats-new">What's new</a><a href="/members">Members</a></nav></header>
<main><h1>Ospreys back at the reservoir</h1><div class="block-container">${POSTS.map(([who, text], i) => `<article class="message" data-author="${who}" id="post-${100 + i}"><div class="message-user"><a href="/members/${i}">${who}</a><span>Member</span></div><div class="message-body"><div class="bbWrapper">${text}</div></div><footer><a class="reaction" href="/posts/${100 + i}/react">Like</a> <a href="/posts/${100 + i}/reply">Reply</a></footer></article><script>XF.ready(function(){XF.activate(document.getElementById("post-${100 + i}"));});</script>`).join("\n")}</div></main>
<footer><a href="/help/terms">Terms and rules</a> <a href="/help/privacy">Privacy policy</a></footer>
<script>${bigConfig("XF_CONFIG", 150)}</script><script>${bigConfig("XF_PHRASES", 80)}</script>
<script src="/forum/jquery.min.js"></script><script src="/forum/xf/core-compiled.js"></script>`, "", "Ospreys back at the reservoir | Valley Birders"));
js["/forum/jquery.min.js"] = `window.jQuery = window.$ = function(){ return {}; };`;
js["/forum/xf/core-compiled.js"] = `window.XF_LOADED = 1;`;

// 22. An Astro page: static article, a comments island hydrated when visible.
add({ path: "/b/astro", kind: "Astro page: static article, client island for comments", render: false, text: OBS[3]! },
  doc(`${SITE_NAV}<main>${ARTICLE}<astro-island uid="Z1kq2" component-url="/_astro/Comments.js" component-export="default" renderer-url="/_astro/client.js" props='{"slug":[0,"dome"]}' ssr client="visible"><div class="comments-loading">Loading comments…</div></astro-island></main>${SITE_FOOTER}
<script>(()=>{var l=(s,i)=>{let o=async()=>{await(await s())()},d=new IntersectionObserver(e=>{for(let t of e)if(t.isIntersecting){d.disconnect(),o();break}});for(let e of i.children)d.observe(e)};(self.Astro||(self.Astro={})).visible=l;window.dispatchEvent(new Event("astro:visible"));})();</script>`));

// 23. Blazor WebAssembly: a loading ring in #app and an error banner; the runtime renders the page.
add({ path: "/b/blazor", kind: "Blazor WebAssembly: loading ring in #app, error banner", render: true, text: OBS[4]! },
  doc(`<div id="app"><svg class="loading-progress"><circle r="40%" cx="50%" cy="50%"></circle><circle r="40%" cx="50%" cy="50%"></circle></svg><div class="loading-progress-text"></div></div>
<div id="blazor-error-ui" style="display:none">An unhandled error has occurred. <a href="" class="reload">Reload</a> <a class="dismiss">🗙</a></div><script src="/_framework/blazor.webassembly.js"></script>`,
  `<base href="/"><link rel="stylesheet" href="/css/app.css">`, "Valley Courier"));
js["/_framework/blazor.webassembly.js"] = fill(`document.getElementById("app")`, fetched);

// 24. A web app whose static HTML is a wordy splash screen ("Loading your workspace…", a tip).
const NOTES = "Version 4.2 adds shared folders: anyone you invite can now upload, rename and move files without asking the owner first.";
add({ path: "/b/splash", kind: "SPA with a wordy loading splash screen", render: true, text: NOTES, absent: "Loading your workspace" },
  doc(`<div id="root"><div class="splash"><h1>Harbourline</h1><p>Loading your workspace… This usually takes a few seconds. If it takes longer, check your connection or visit our status page for news of any ongoing incident.</p><p>Tip: press ? anywhere to see every keyboard shortcut.</p></div></div><script src="/hl/app.js"></script>`, "", "Harbourline"));
js["/hl/app.js"] = `fetch("/api/release-notes").then((r) => r.json()).then((d) => { document.getElementById("root").innerHTML = "<main><h1>What's new</h1>" + d.notes.map((p) => "<p>" + p + "</p>").join("") + "</main>"; });`;
json["/api/release-notes"] = { notes: [NOTES, "Search now finds words inside PDF and Word documents, and results show the matching line.", "The desktop app starts twice as fast on older laptops."] };

// 25. A WordPress post: static theme, jQuery and a dozen plugin scripts with inline configuration.
add({ path: "/b/wordpress", kind: "WordPress post with jQuery and many plugin scripts", render: false, text: OBS[0]! },
  doc(`<div id="page" class="site">${SITE_NAV}<div id="content"><main id="main"><article class="post type-post hentry"><header class="entry-header"><h1 class="entry-title">The dome on Mount Carrow</h1></header><div class="entry-content">${ps(OBS)}</div></article></main>
<aside id="secondary" class="widget-area"><section class="widget"><h2>Recent posts</h2><ul><li><a href="/a">Library hours change</a></li><li><a href="/b">Bridge repairs</a></li><li><a href="/c">Fair results</a></li></ul></section><section class="widget"><h2>Archives</h2><ul><li>March</li><li>February</li><li>January</li></ul></section></aside></div>${SITE_FOOTER}</div>
${["jquery/jquery.min", "jquery/jquery-migrate.min", "contact-form-7/index", "elementor/frontend.min", "wp-embed.min", "comment-reply.min", "cookie-notice/front.min", "jetpack/photon.min", "sharing/share.min", "lazyload/lazy.min"].map((f) => `<script src="/wp/${f}.js" id="${f.replace(/\W/g, "-")}-js"></script>`).join("")}
<script id="elementor-frontend-js-before">${bigConfig("elementorFrontendConfig", 90)}</script><script id="wpcf7-js-extra">var wpcf7 = {"api":{"root":"\\/wp-json\\/","namespace":"contact-form-7\\/v1"}};</script>`,
  `<script>window._wpemojiSettings = {"baseUrl":"https:\\/\\/s.w.org\\/images\\/core\\/emoji\\/15.0.3\\/72x72\\/","ext":".png"};</script>${GTM}`));
for (const f of ["jquery/jquery.min", "jquery/jquery-migrate.min", "contact-form-7/index", "elementor/frontend.min", "wp-embed.min", "comment-reply.min", "cookie-notice/front.min", "jetpack/photon.min", "sharing/share.min", "lazyload/lazy.min"]) js[`/wp/${f}.js`] = `void 0;`;

// 26. A static article with a Disqus-style comment embed and its noscript notice.
add({ path: "/b/comments-embed", kind: "static article with a comments embed and its noscript notice", render: false, text: OBS[2]! },
  doc(`${SITE_NAV}<main>${ARTICLE}<div id="disqus_thread"></div>
<script>var disqus_config = function () { this.page.url = location.href; this.page.identifier = "dome"; }; (function() { var d = document, s = d.createElement("script"); s.src = "https://valley-courier.disqus.example/embed.js"; s.setAttribute("data-timestamp", +new Date()); (d.head || d.body).appendChild(s); })();</script>
<noscript>Please enable JavaScript to view the comments.</noscript></main>${SITE_FOOTER}`));

// 27. A statistics page: the table is static, a chart script carries the same numbers inline.
const ROWS = Array.from({ length: 12 }, (_, i) => [["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][i]!, 8 + ((i * 7) % 13), 40 + ((i * 11) % 30)] as const);
add({ path: "/b/stats", kind: "static statistics table with a large inline chart script", render: false, text: "Clear nights recorded at the Mount Carrow observatory each month, with the hours of observing they allowed." },
  doc(`${SITE_NAV}<main><h1>Observing conditions</h1><p>Clear nights recorded at the Mount Carrow observatory each month, with the hours of observing they allowed.</p>
<table><thead><tr><th>Month</th><th>Clear nights</th><th>Hours</th></tr></thead><tbody>${ROWS.map(([m, n, h]) => `<tr><td>${m}</td><td>${n}</td><td>${h}</td></tr>`).join("")}</tbody></table><canvas id="chart" width="600" height="300"></canvas></main>${SITE_FOOTER}
<script src="/charts/chart.umd.min.js"></script><script>const series = ${JSON.stringify(Array.from({ length: 365 }, (_, d) => ({ day: d, cloud: (d * 37) % 100, seeing: ((d * 13) % 50) / 10 })))}; window.chart = { type: "line", data: series };</script>`, "", "Observing conditions | Valley Courier"));
js["/charts/chart.umd.min.js"] = `window.Chart = function(){};`;

export const BLIND_CORPUS: CorpusPage[] = Object.values(pages).flatMap((p) => (p.page ? [p.page] : []));
export const BLIND_ROUTES: CorpusRoutes = { pages, js, json };
