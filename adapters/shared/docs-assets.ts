/** Swagger UI's prebuilt files for GET /docs, read from the installed swagger-ui-dist package on first use. */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { DocsAssets } from "../../core/ports.ts";

export function docsAssets(): DocsAssets {
  const loaded = new Map<string, Promise<Uint8Array | null>>();
  return (name) => {
    let file = loaded.get(name);
    if (!file) {
      file = (async () => {
        try {
          const dir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
          return new Uint8Array(await readFile(join(dir, name)));
        } catch {
          return null;
        }
      })();
      loaded.set(name, file);
    }
    return file;
  };
}
