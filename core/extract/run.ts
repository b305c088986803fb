/**
 * Where the operations extract HTML: through the `extract` port when the runtime gives one (a
 * pool of worker threads, adapters/extract/), else here in process. Both run `extractContent`
 * on the page decoded by `decodeHtml`, so the result is the same either way.
 */
import { loadExtractLibraries } from "../lazy.ts";
import type { Ports } from "../ports.ts";
import { decodeHtml } from "./decode-html.ts";
import { extractContent } from "./extract-content.ts";
import type { ExtractPort, ExtractRequest, ExtractResult } from "../ports/extract.ts";

/** The in-process extractor: the core's default, and what a worker runs. */
export const inProcessExtractor: ExtractPort = {
  async extract(req: ExtractRequest): Promise<ExtractResult> {
    await loadExtractLibraries();
    const { onlyMainContent, formats, shellCheck } = req;
    return extractContent(decodeHtml(req.body, req.contentType), req.url, { onlyMainContent, ...(formats ? { formats } : {}), ...(shellCheck ? { shellCheck } : {}) });
  },
};

export function extractPage(ports: Pick<Ports, "extract">, req: ExtractRequest): Promise<ExtractResult> {
  return (ports.extract ?? inProcessExtractor).extract(req);
}
