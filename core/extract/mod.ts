export { extractContent } from "./extract-content.ts";
export type { ExtractedLink, ExtractOptions, ExtractResult } from "./types.ts";
