/**
 * Reads every office document of tests/fixtures/documents through the core's page pipeline on
 * whichever runtime executes this file, and prints each one's first markdown line. Run by
 * tests/runtimes/core-on-runtimes.test.ts under Deno and Bun (mammoth, fflate and linkedom's XML
 * parser must work on each: Deno, for one, disables `__proto__`, which patches/mammoth+… replaces).
 */
import { readFile } from "node:fs/promises";
import { loadExtractLibraries } from "../../core/lazy.ts";
import { contentOf, kindOf } from "../../core/pages/read-page.ts";

const dir = new URL("../fixtures/documents/", import.meta.url);
await loadExtractLibraries();
const out: Record<string, string> = {};
for (const file of ["report.docx", "report.odt", "inventory.xlsx", "inventory.ods", "slides.pptx", "slides.odp"]) {
  const body = new Uint8Array(await readFile(new URL(file, dir)));
  const kind = kindOf("application/octet-stream", body);
  if (!kind) throw new Error(`${file}: not recognised`);
  const content = await contentOf({}, kind, body, "application/octet-stream", `http://docs.test/${file}`, true, { formats: ["markdown"] });
  out[file] = content.markdown.split("\n")[0]!;
}
console.log(JSON.stringify(out));
