/**
 * Where the operations extract HTML: through the `extract` port when the runtime gives one (a
 * pool of worker threads, adapters/extract/), else here in process. Both run `extractContent`
 * on the page decoded by `decodeHtml`, so the result is the same either way.
 */
import { loadExtractLibraries } from "../lazy.ts";
import type { Ports } from "../ports.ts";
import { decodeHtml } from "./decode-html.ts";
import { extractContent } from "./extract-content.ts";
import type { DocumentKind, ExtractPort, ExtractRequest, ExtractResult } from "../ports/extract.ts";
import { DocumentError, documentHtml } from "./documents/read-document.ts";

const UNREADABLE: Omit<ExtractResult, "unreadable"> = { title: null, description: null, author: null, published_at: null, language: null, site_name: null, html: "", text: "", markdown: "", links: [] };

/**
 * An office document, read whole as the HTML its converter writes; one that cannot be read is
 * answered as such (`unreadable`), not thrown, so the reason crosses a worker's channel intact.
 */
async function extractDocument(kind: DocumentKind, req: ExtractRequest): Promise<ExtractResult> {
  let html: string;
  try {
    html = await documentHtml(kind, req.body);
  } catch (err) {
    if (err instanceof DocumentError) return { ...UNREADABLE, unreadable: err.message };
    throw err;
  }
  return extractContent(html, req.url, { onlyMainContent: false, ...(req.formats ? { formats: req.formats } : {}) });
}

/** The in-process extractor: the core's default, and what a worker runs. */
export const inProcessExtractor: ExtractPort = {
  async extract(req: ExtractRequest): Promise<ExtractResult> {
    await loadExtractLibraries();
    if (req.document) return extractDocument(req.document, req);
    const { onlyMainContent, formats, shellCheck } = req;
    return extractContent(decodeHtml(req.body, req.contentType), req.url, { onlyMainContent, ...(formats ? { formats } : {}), ...(shellCheck ? { shellCheck } : {}) });
  },
};

export function extractPage(ports: Pick<Ports, "extract">, req: ExtractRequest): Promise<ExtractResult> {
  return (ports.extract ?? inProcessExtractor).extract(req);
}
