/**
 * Where benchmarks find the public data sets they measure on: the folder named by QUARRY_BENCH_DATA
 * (relative to the current directory), by default ../shared/bench beside the repository. Each set
 * is a subfolder (article-extraction, extraction-multilingual); bench/README.md says where each
 * comes from publicly and under what licence. Tests never read it: they carry their own pages in
 * tests/fixtures/.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

export function benchDataDir(): string {
  return resolve(process.env.QUARRY_BENCH_DATA ?? join(repoRoot, "..", "shared", "bench"));
}

/** The folder of one data set, or an error naming where it was looked for and how to get it. */
export function benchSet(name: "article-extraction" | "extraction-multilingual" | "retrieval/cranfield"): string {
  const dir = join(benchDataDir(), name);
  if (!existsSync(dir)) {
    throw new Error(`benchmark data set ${name} not found at ${dir}: set QUARRY_BENCH_DATA to the folder that holds it (bench/README.md says where to get it)`);
  }
  return dir;
}
