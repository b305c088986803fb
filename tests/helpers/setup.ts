/**
 * Loaded before every test file: HTML parsing and the tokenizer load on first need in
 * production (operations await them); unit tests call those functions directly, so they load here.
 *
 * In-process files share their worker's globals (isolate: false), so a file that leaves a fake or
 * wrapped timer behind would break every later file's timeouts. The first file's timers are kept
 * as the real ones, and a file that ends with others in their place fails, by its own name.
 */
import { afterAll, expect } from "vitest";
import { loadLibraries } from "../../core/lazy.ts";

await loadLibraries();

const REAL = Symbol.for("quarry.tests.realGlobals");
const names = ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "Date", "fetch"] as const;
type Globals = Record<(typeof names)[number], unknown>;
const holder = globalThis as unknown as Record<symbol, Globals | undefined>;
holder[REAL] ??= Object.fromEntries(names.map((n) => [n, (globalThis as Record<string, unknown>)[n]])) as Globals;
const real = holder[REAL]!;

afterAll(() => {
  const changed = names.filter((n) => (globalThis as Record<string, unknown>)[n] !== real[n]);
  for (const n of changed) (globalThis as Record<string, unknown>)[n] = real[n];
  expect(changed, "globals this file replaced and did not put back").toEqual([]);
});
