/**
 * Research quality bench: the real POST /v1/research, end to end, over the question set of
 * bench/research/set (180 questions in thirteen splits, each with on-topic pages, off-topic pages that
 * share the question's words and one result whose page answers 500).
 *
 * The pages are served on 127.0.0.1 (one local server per result slot, so each result is its
 * own site), and the search results come from a replayed SearXNG answer that lists them in
 * the set's order, off-topic pages included. Two versions answer in the same run:
 *
 * - baseline: the research operation as it was on `main` at BASELINE (the commit this work
 *   started from), run from a `git archive` of that commit extracted to a temporary directory;
 * - current: this tree.
 *
 * Both are scored by bench/research/metric.ts on each split apart (dev, holdout, holdout2 … holdout12),
 * beside a length control (lengthControl below) that picks the longest sentences naming a question
 * word on the current version's first three pages.
 *
 * With `--embeddings`, a third version answers too: this tree with QUARRY_EMBEDDINGS_URL pointing at
 * bench/research/embeddings-server.ts (a real sentence-embedding model) run as its own process, so
 * Quarry's embeddings client reaches it over HTTP. Its rows are "embeddings"; an answer that fell
 * back to the lexical ranking (meta.ranking) is counted and printed, never silently scored.
 *
 *   npx tsx bench/research/run.ts [--tier summary] [--split dev|holdout|…|holdout12|dev,holdout|all] [--verbose] [--no-baseline] [--embeddings]
 */
import { execSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startPageServer, send, type PageServer } from "../../tests/helpers/page-server.ts";
import { replayEnv, startReplayServer } from "../../tests/helpers/replay-server.ts";
import { localPages, searxngBody } from "../../tests/research/fixtures.ts";
import { makeApp, type TestApp } from "../../tests/helpers/app.ts";
import { loadQuestions, pageHtml, type BenchPage } from "./dataset.ts";
import { score, type Answer, type Scored } from "./metric.ts";
import { stems } from "../../core/answers/words.ts";

const BASELINE = "36a19fd4163e009f11332805d3cfb4a3d158e0a1";
const ROOT = resolve(new URL("../..", import.meta.url).pathname);
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const tier = arg("tier", "summary");
const split = arg("split", "all");
const verbose = process.argv.includes("--verbose");
/** Development runs: skip the baseline (its rows then repeat the current version's). */
const noBaseline = process.argv.includes("--no-baseline");
const withEmbeddings = process.argv.includes("--embeddings");

/** The baseline's tree, extracted once per commit; node_modules is this checkout's. */
function baselineTree(): string {
  const dir = join(tmpdir(), `quarry-research-baseline-${BASELINE.slice(0, 12)}`);
  if (!existsSync(join(dir, "tests/helpers/app.ts"))) {
    mkdirSync(dir, { recursive: true });
    execSync(`git archive ${BASELINE} core adapters tests/helpers package.json tsconfig.json | tar -x -C ${dir}`, { cwd: ROOT });
  }
  // The link names the checkout that made the tree, which may since have gone: point it at ours.
  const modules = join(dir, "node_modules");
  if (!existsSync(join(modules, "hono"))) {
    rmSync(modules, { force: true });
    symlinkSync(join(ROOT, "node_modules"), modules);
  }
  return dir;
}

type MakeApp = typeof makeApp;
const questions = loadQuestions().filter((q) => split === "all" || split.split(",").includes(q.split));
const slots = Math.max(...questions.map((q) => q.pages.length));
const replay = await startReplayServer();
const sites: PageServer[] = await Promise.all(Array.from({ length: slots }, () => startPageServer()));
const pages = new Map<string, BenchPage>();
for (const q of questions) {
  q.pages.forEach((p, i) => {
    const site = sites[i]!;
    const path = `/${q.id}/${i + 1}`;
    pages.set(`${site.url}${path}`, p);
    site.route(path, p.broken ? send("text/html", "<h1>Internal error</h1>", 500) : send("text/html; charset=utf-8", pageHtml(p, `site${i + 1}.example`)));
  });
}

/**
 * The embeddings server in its own process (the model's work then never stalls the pages and Quarry
 * served from this one), its cache warmed with every text of the selected questions so that no
 * request waits for the model past Quarry's embeddings timeout.
 */
async function startEmbeddings(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ["--import", "tsx", new URL("./embeddings-server.ts", import.meta.url).pathname], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) resolve((JSON.parse(out.split("\n")[0]!) as { url: string }).url);
    });
    child.on("exit", (code) => reject(new Error(`embeddings server exited with ${code}`)));
  });
  const texts = [...new Set(questions.flatMap((q) => [q.question, ...q.pages.flatMap((p) => [p.title, ...p.sentences.map((s) => s.text)])]))];
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += 256) {
    const res = await fetch(`${url}/embeddings`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "warm-up", input: texts.slice(i, i + 256) }) });
    if (!res.ok) throw new Error(`embeddings server answered ${res.status} while warming up`);
    await res.arrayBuffer();
  }
  console.error(`embeddings: ${texts.length} texts warmed in ${Math.round(performance.now() - t0)} ms`);
  return { url, stop: () => child.kill("SIGTERM") };
}

async function start(make: MakeApp, extraEnv: Record<string, string> = {}): Promise<{ app: TestApp; key: string }> {
  // Only SearXNG answers: the other engines' recorded links are public addresses.
  Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
  const app = await make({ env: { ...replayEnv(replay.url), ...extraEnv }, pages: localPages() });
  app.clock.now = () => Date.now();
  return { app, key: (await app.key("bench", ["research"], "enterprise")).secret };
}

async function ask(t: { app: TestApp; key: string }, question: string): Promise<Answer & { meta: { sub_queries: string[]; ranking: string; embeddings_error?: string } }> {
  const res = await t.app.request("/v1/research", { method: "POST", key: t.key, json: { query: question, tier } });
  if (res.status !== 200) throw new Error(`research answered ${res.status}: ${await res.text()}`);
  return res.json();
}

const ours = await start(makeApp);
const base = noBaseline ? ours : await start((await import(join(baselineTree(), "tests/helpers/app.ts"))).makeApp as MakeApp);
const embeddingsServer = withEmbeddings ? await startEmbeddings() : null;
const emb = embeddingsServer ? await start(makeApp, { QUARRY_EMBEDDINGS_URL: embeddingsServer.url, QUARRY_EMBEDDINGS_MODEL: "use-lite-512" }) : null;
const rows: { id: string; split: string; base: Scored; ours: Scored; emb: Scored | null; control: Scored; deterministic: boolean; ms: [number, number, number] }[] = [];
/** Questions whose embeddings answer fell back to the lexical ranking, with the reason. */
const fellBack: string[] = [];
const FINDINGS: Record<string, number> = { basic: 3, summary: 5, detailed: 8, full: 12 };

/**
 * A control that knows nothing of what answers: the longest sentences naming a question word on
 * the first three pages the current version ranks. The set's answers are longer than its
 * background sentences, so this scores well; a ranking is only better at answering than at
 * finding long sentences when it beats this row.
 */
function lengthControl(question: string, answer: Answer): Answer {
  const words = stems(question);
  const read = answer.sources.filter((s) => pages.get(s.url) && !pages.get(s.url)!.broken).slice(0, 3);
  const candidates = read.flatMap((s) => pages.get(s.url)!.sentences.filter((x) => [...stems(x.text)].some((t) => words.has(t))).map((x) => ({ text: x.text, citations: [s.id] })));
  const findings = candidates.map((f, i) => ({ f, i })).sort((a, b) => b.f.text.split(" ").length - a.f.text.split(" ").length || a.i - b.i).slice(0, FINDINGS[tier] ?? 5).map((x) => x.f);
  return { report: { findings }, sources: answer.sources };
}
for (const q of questions) {
  replay.bodies.searxng = searxngBody(q.question, q.pages.map((p, i) => ({ url: `${sites[i]!.url}/${q.id}/${i + 1}`, title: p.title, content: p.sentences[0]!.text })));
  let t0 = performance.now();
  const o = await ask(ours, q.question);
  const oMs = performance.now() - t0;
  t0 = performance.now();
  const b = noBaseline ? o : await ask(base, q.question);
  const bMs = noBaseline ? oMs : performance.now() - t0;
  const again = await ask(ours, q.question);
  const same = (x: Answer, y: Answer) => JSON.stringify(x.report) === JSON.stringify(y.report) && JSON.stringify(x.sources) === JSON.stringify(y.sources);
  let deterministic = same(o, again);
  t0 = performance.now();
  const e = emb ? await ask(emb, q.question) : null;
  const eMs = performance.now() - t0;
  if (e && emb) {
    if (e.meta.ranking !== "embeddings") fellBack.push(`${q.id}: ${e.meta.embeddings_error ?? e.meta.ranking}`);
    deterministic &&= same(e, await ask(emb, q.question));
  }
  const row = { id: q.id, split: q.split, base: score(q, b, (u) => pages.get(u)), ours: score(q, o, (u) => pages.get(u)), emb: e ? score(q, e, (u) => pages.get(u)) : null, control: score(q, lengthControl(q.question, o), (u) => pages.get(u)), deterministic, ms: [bMs, oMs, eMs] as [number, number, number] };
  rows.push(row);
  if (verbose) {
    console.log(`\n${q.id} ${q.question}  sub-queries: base ${JSON.stringify(b.meta.sub_queries)} ours ${JSON.stringify(o.meta.sub_queries)}`);
    console.log(`  base: precision ${row.base.correct}/${row.base.citations}, facts ${row.base.factsFound}/${row.base.facts}; ours: precision ${row.ours.correct}/${row.ours.citations}, facts ${row.ours.factsFound}/${row.ours.facts}${deterministic ? "" : "  NOT DETERMINISTIC"}`);
    console.log(`  sources: ${(o as unknown as { sources: { url: string; score: number }[] }).sources.map((s) => `${pages.get(s.url)?.on ? "on" : "OFF"}:${s.score.toFixed(2)} "${pages.get(s.url)?.title.slice(0, 24) ?? ""}"`).join(" ")}`);
    for (const w of row.ours.wrong) console.log(`  ours wrong: ${w}`);
    const missing = q.facts.filter((re) => !re.test(o.report.findings.map((f) => f.text).join("\n")));
    if (missing.length) console.log(`  ours missing facts: ${missing.map(String).join(", ")}`);
    if (e && row.emb) {
      console.log(`  embeddings: precision ${row.emb.correct}/${row.emb.citations}, facts ${row.emb.factsFound}/${row.emb.facts}; sources: ${(e as unknown as { sources: { url: string; score: number }[] }).sources.map((s) => `${pages.get(s.url)?.on ? "on" : "OFF"}:${s.score.toFixed(2)}`).join(" ")}`);
      for (const w of row.emb.wrong) console.log(`  embeddings wrong: ${w}`);
      const lost = q.facts.filter((re) => !re.test(e.report.findings.map((f) => f.text).join("\n")));
      if (lost.length) console.log(`  embeddings missing facts: ${lost.map(String).join(", ")}`);
    }
  }
}
if (!noBaseline) await base.app.close();
await ours.app.close();
await emb?.app.close();
embeddingsServer?.stop();
await replay.close();
await Promise.all(sites.map((s) => s.close()));

const sum = (xs: Scored[], k: keyof Omit<Scored, "wrong">) => xs.reduce((a, s) => a + s[k], 0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
function line(name: string, sel: typeof rows, pick: "base" | "ours" | "emb" | "control") {
  const s = sel.map((r) => r[pick]!);
  const precision = sum(s, "correct") / (sum(s, "citations") || 1);
  const recall = sum(s, "factsFound") / (sum(s, "facts") || 1);
  const top3 = sum(s, "onTopicTop3") / (3 * sel.length || 1);
  const ms = pick === "control" ? NaN : median(sel.map((r) => r.ms[{ base: 0, ours: 1, emb: 2 }[pick]]));
  return `| ${name} | ${sel.length} | ${precision.toFixed(3)} (${sum(s, "correct")}/${sum(s, "citations")}) | ${recall.toFixed(3)} (${sum(s, "factsFound")}/${sum(s, "facts")}) | ${(sum(s, "findings") / (sel.length || 1)).toFixed(1)} | ${top3.toFixed(2)} | ${Number.isNaN(ms) ? "" : Math.round(ms)} |`;
}
const table = ["| version, split | questions | citation precision | key-fact recall | findings / report | on-topic share of the top 3 sources | median ms |", "|---|---:|---:|---:|---:|---:|---:|"];
for (const sp of ["dev", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7", "holdout8", "holdout9", "holdout10", "holdout11", "holdout12"]) {
  const sel = rows.filter((r) => r.split === sp);
  if (!sel.length) continue;
  table.push(line(`baseline (main ${BASELINE.slice(0, 7)}), ${sp}`, sel, "base"), line(`current, ${sp}`, sel, "ours"));
  if (emb) table.push(line(`current + embeddings, ${sp}`, sel, "emb"));
  table.push(line(`length control, ${sp}`, sel, "control"));
}
table.push(line("baseline, all", rows, "base"), line("current, all", rows, "ours"));
if (emb) table.push(line("current + embeddings, all", rows, "emb"));
table.push(line("length control, all", rows, "control"));
const deterministic = rows.every((r) => r.deterministic);
console.log(`\ntier ${tier}; same output on a second run for every question: ${deterministic ? "yes" : `NO (${rows.filter((r) => !r.deterministic).map((r) => r.id).join(", ")})`}`);
if (emb) console.log(`embeddings ranking used for ${rows.length - fellBack.length} of ${rows.length} questions${fellBack.length ? `; fell back to lexical: ${fellBack.join("; ")}` : ""}`);
console.log(table.join("\n"));
writeFileSync(new URL("./RESULTS.part.md", import.meta.url), `${table.join("\n")}\n`);
