#!/usr/bin/env node
// The `quarry` command. It runs the ahead-of-time build in dist/ (made by `npm install` through
// bin/build.mjs) when that build is newer than every source file, and otherwise loads the
// TypeScript sources through tsx, so an edited checkout never runs stale code.
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const built = `${root}dist/cli.js`;

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const fresh = existsSync(built) && statSync(built).mtimeMs >= Math.max(newestSource(`${root}core`), newestSource(`${root}adapters`));
let run;
if (fresh) {
  ({ run } = await import(built));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ run } = await import("../adapters/node/cli.ts"));
}
await run(process.argv.slice(2));
