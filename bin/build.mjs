#!/usr/bin/env node
// Compiles the Node entry points ahead of time (npm's `prepare` runs it after install), so
// `quarry serve` starts without transpiling TypeScript: dist/ holds the CLI and the embeddable
// core as ES modules. Dependencies stay external, and dynamic imports (metrics, the browser, the
// tokenizer's tables) stay separate chunks that load only when used.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
rmSync(`${root}dist`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { cli: "adapters/node/cli.ts", core: "core/mod.ts", embed: "adapters/node/embed.ts", "extract-worker": "adapters/extract/worker.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
});
