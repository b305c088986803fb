/**
 * core/ imports point down (architecture.md "Wave 3", issue #29): the layer table below is the one
 * place the order is written, and this test holds every file of core/ to it. It reads the sources
 * only (TypeScript's own import scanner, so `import type`, `export … from`, `import()` and
 * `typeof import()` all count: a type-only cycle is one value import away from failing at load).
 *
 * A module is a top-level file or folder of core/ (`ports.ts` and `ports/` are one module,
 * `ports`), except that each folder under operations/ is a module of its own. A file may import
 * its own module and the modules of any lower layer; never another module of its own layer (so
 * no operation imports another), never a higher one, and never anything outside core/ (adapters,
 * tests, bench). And core/ has no import cycle at all, inside a module either.
 *
 * A new folder or top-level file needs a row here: an unplaced file fails the test.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** Top to bottom. Each module's comment says what it is; each layer's why it sits where it does. */
const LAYERS: Array<{ layer: string; why: string; modules: Record<string, string> }> = [
  {
    layer: "entry",
    why: "what `quarry/core` exports; nothing inside core imports it",
    modules: { mod: "the package's public entry" },
  },
  {
    layer: "app",
    why: "createApp assembles everything below into one Hono app",
    modules: { app: "createApp: the gateway's steps around every route, compat, docs and dashboard mounted" },
  },
  {
    layer: "outer APIs",
    why: "they describe or translate the routes below them and serve no route of their own kind",
    modules: {
      compat: "the Tavily- and Firecrawl-compatible APIs and MCP: translation into native requests",
      openapi: "the OpenAPI document, generated from the route table",
    },
  },
  {
    layer: "routes",
    why: "each answers its own HTTP routes; none imports another (no operation imports another operation)",
    modules: {
      "operations/*": "one module per operation (search, scrape, map, crawl, collections, video, social, research)",
      routes: "health, keys, usage, daily usage, metrics",
      dashboard: "the web dashboard's page and assets",
      docs: "GET /docs (Swagger UI) and the API guide",
    },
  },
  {
    layer: "shared answers",
    why: "what two operations share lives here, below them, not in either",
    modules: { answers: "passages and excerpts, evidence ranking, the question model, extractive synthesis, the LLM client, word lists" },
  },
  {
    layer: "HTTP edge",
    why: "the request pipeline reads the services and config of the app it guards; the routes above build on it",
    modules: {
      gateway: "context, each route's steps as one handler (pipeline), auth guard, admission, headers, CORS, per-IP limit, the route type, body validation",
      schema: "request and response parts every route shares: tiers, counts, domains, target URLs, render fields",
    },
  },
  {
    layer: "services",
    why: "the per-app wiring: builds runners, the egress fetch and the job engine (handing it its page reader); knows no operation",
    modules: { services: "the services built once per app" },
  },
  {
    layer: "configuration",
    why: "parses every part's settings, so it sits above the parts whose settings types it names (jobs' among them)",
    modules: { config: "the environment, parsed and checked" },
  },
  {
    layer: "jobs and pages",
    why: "the job engine is handed the page reader (services.ts wires them): neither imports the other",
    modules: {
      jobs: "the crawl and batch engine: frontier, politeness, robots, leases, webhooks, per-page work",
      pages: "reading one page as scrape does (fetch or browser, extraction) and the data it gives",
    },
  },
  {
    layer: "index",
    why: "collections are filled by scrape and jobs and searched by search and research, so they sit below all of them",
    modules: { collections: "the accounts' own indexes: passages, query terms, adding within the plan, searching by document" },
  },
  {
    layer: "content",
    why: "pure transformations of text the layers above fetch",
    modules: {
      extract: "HTML and PDF to main content, markdown, text, metadata",
      budget: "token counting and transcript excerpts",
      changes: "change tracking: a read compared with the account's previous read of the URL, and the diff",
    },
  },
  {
    layer: "ranking",
    why: "merges and scores what the backends return, so it sits on their result types",
    modules: { ranking: "merging, lexical scores, URL normalisation" },
  },
  {
    layer: "sources and policy",
    why: "talk to the outside or decide what may be reached, on the ports and limits alone",
    modules: {
      backends: "the upstream engines and platforms, the catalogue, registry, runner and circuit breaker",
      embeddings: "the optional embeddings model's client (QUARRY_EMBEDDINGS_URL), for research and collections",
      keys: "secrets, hashing, scopes, authentication",
      net: "address and URL policy, egress, trusted proxies, fetch errors",
    },
  },
  {
    layer: "limits",
    why: "plans, periods and windows: plain arithmetic that keys and jobs use",
    modules: { limits: "plans, the sliding window, the token bucket, periods, usage groups" },
  },
  {
    layer: "leaves",
    why: "import nothing of the app: the port types are a leaf",
    modules: {
      ports: "the port interfaces (ports.ts and ports/: jobs, the job model, the browser, extraction)",
      errors: "the error codes and ApiError",
      ids: "id generation",
      lazy: "libraries loaded when first needed (HTML, markdown, the tokenizer)",
      pool: "bounded concurrency over a list",
    },
  },
];

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CORE = join(ROOT, "core");
const files = readdirSync(CORE, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) => f.split("\\").join("/")).sort();

/** `ports.ts` and `ports/x.ts` are `ports`; `operations/search/plan.ts` is `operations/search`. */
function moduleOf(file: string): string {
  const [head, next] = file.split("/");
  if (head === "operations" && next && file.split("/").length > 2) return `operations/${next}`;
  return head!.replace(/\.ts$/, "");
}

const layerOf = new Map<string, number>();
for (const [i, l] of LAYERS.entries()) for (const m of Object.keys(l.modules)) layerOf.set(m, i);
function layerIndex(module: string): number | undefined {
  return layerOf.get(module) ?? (module.startsWith("operations/") ? layerOf.get("operations/*") : undefined);
}

interface Edge {
  from: string;
  line: number;
  spec: string;
  /** Path from the repository root, resolved. */
  target: string;
}

const edges: Edge[] = files.flatMap((file) => {
  const text = readFileSync(join(CORE, file), "utf8");
  return ts.preProcessFile(text, true, true).importedFiles
    .filter((ref) => ref.fileName.startsWith("."))
    .map((ref) => ({
      from: file,
      line: text.slice(0, ref.pos).split("\n").length,
      spec: ref.fileName,
      target: relative(ROOT, resolve(dirname(join(CORE, file)), ref.fileName)).split("\\").join("/"),
    }));
});
const inCore = (e: Edge) => e.target.startsWith("core/");
const where = (e: Edge) => `core/${e.from}:${e.line}`;

describe("core layers", () => {
  it("finds the core sources and their imports", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(500);
  });

  it("places every core file in a layer", () => {
    const unplaced = files.filter((f) => layerIndex(moduleOf(f)) === undefined);
    expect(unplaced, "add their module to LAYERS in tests/unit/layers.test.ts").toEqual([]);
  });

  it("names only modules that exist", () => {
    const modules = new Set(files.map(moduleOf));
    const stale = [...layerOf.keys()].filter((m) => m !== "operations/*" && !modules.has(m));
    expect(stale).toEqual([]);
  });

  it("imports nothing from outside core/ (adapters, tests, bench) and only files that exist", () => {
    const outside = edges.filter((e) => !inCore(e)).map((e) => `${where(e)} imports ${e.spec} (${e.target}), outside core/`);
    const missing = edges.filter((e) => inCore(e) && !existsSync(join(ROOT, e.target))).map((e) => `${where(e)} imports ${e.spec}, which does not exist`);
    expect([...outside, ...missing]).toEqual([]);
  });

  it("imports point down: a module imports only its own files and lower layers", () => {
    const wrong: string[] = [];
    for (const e of edges.filter(inCore)) {
      const from = moduleOf(e.from);
      const to = moduleOf(e.target.slice("core/".length));
      if (from === to) continue;
      const a = layerIndex(from);
      const b = layerIndex(to);
      if (a === undefined || b === undefined || b > a) continue; // unplaced files fail above
      const how = b === a ? `another module of its own layer "${LAYERS[a]!.layer}"` : `a higher layer ("${LAYERS[b]!.layer}" is above "${LAYERS[a]!.layer}")`;
      wrong.push(`${where(e)}: ${from} imports ${e.target} (${to}), ${how}`);
    }
    expect(wrong).toEqual([]);
  });

  it("has no import cycle, type imports included", () => {
    const next = new Map<string, string[]>(files.map((f) => [f, []]));
    const lineOf = new Map<string, number>();
    for (const e of edges.filter(inCore)) {
      const to = e.target.slice("core/".length);
      if (!next.has(to)) continue;
      next.get(e.from)!.push(to);
      lineOf.set(`${e.from}>${to}`, e.line);
    }
    // Tarjan's strongly connected components: any with more than one file (or a file importing itself) is a cycle.
    let counter = 0;
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (v: string) => {
      index.set(v, counter);
      low.set(v, counter++);
      stack.push(v);
      onStack.add(v);
      for (const w of next.get(v)!) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) !== index.get(v)) return;
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || next.get(v)!.includes(v)) cycles.push(scc.sort());
    };
    for (const f of files) if (!index.has(f)) visit(f);
    // Each cycle named by its shortest loop through its first file, every step with the line of its import.
    const described = cycles.map((scc) => {
      const members = new Set(scc);
      const start = scc[0]!;
      const back = new Map<string, string>();
      const queue = [start];
      let last: string | undefined;
      while (queue.length && last === undefined) {
        const v = queue.shift()!;
        for (const w of next.get(v)!) {
          if (w === start) {
            last = v;
            break;
          }
          if (members.has(w) && !back.has(w)) back.set(w, v), queue.push(w);
        }
      }
      const loop = [start];
      for (let v = last!; v !== start; v = back.get(v)!) loop.splice(1, 0, v);
      const steps = loop.map((f, i) => `core/${f}:${lineOf.get(`${f}>${loop[(i + 1) % loop.length]}`)}`);
      return `${scc.length} files in a cycle, e.g. ${steps.join(" → ")} → core/${start}`;
    });
    expect(described).toEqual([]);
  });
});
