#!/usr/bin/env node
// The `quarry` command: plain JavaScript that loads the TypeScript sources through tsx.
import { register } from "tsx/esm/api";

register();
const { run } = await import("../adapters/node/cli.ts");
await run(process.argv.slice(2));
