/** /v1/collections bodies and answers (api.md §11). */
import * as v from "valibot";
import { COLLECTION_NAME } from "../../collections/service.ts";
import { Count, Domains, Query, wholeNumber } from "../../schema/fields.ts";

export const CollectionName = (field: string) =>
  v.pipe(v.string(`${field} must be a string`), v.regex(COLLECTION_NAME, `${field} must be 1–64 characters of a-z, 0-9, - and _`));

const MB = 1_000_000;

export const CreateBody = v.strictObject({
  name: CollectionName("name"),
  description: v.optional(v.nullable(v.pipe(v.string("description must be a string"), v.trim(), v.maxLength(500, "description must be at most 500 characters")))),
});
export type CreateRequest = v.InferOutput<typeof CreateBody>;

const DocumentBody = v.pipe(
  v.strictObject({
    id: v.optional(v.pipe(v.string("id must be a string"), v.minLength(1, "id must not be empty"), v.maxLength(512, "id must be at most 512 characters"))),
    url: v.optional(v.pipe(v.string("url must be a string"), v.url("url must be an absolute URL"), v.maxLength(2048, "url must be at most 2048 characters"))),
    title: v.optional(v.pipe(v.string("title must be a string"), v.maxLength(1000, "title must be at most 1000 characters"))),
    text: v.optional(v.pipe(v.string("text must be a string"), v.maxLength(MB, "text must be at most 1 MB"))),
    markdown: v.optional(v.pipe(v.string("markdown must be a string"), v.maxLength(MB, "markdown must be at most 1 MB"))),
    metadata: v.optional(v.record(v.string(), v.unknown(), "metadata must be an object")),
  }),
  v.check((d) => (d.text === undefined) !== (d.markdown === undefined), "each document needs one of text or markdown"),
  v.check((d) => ((d.text ?? d.markdown) ?? "").trim().length > 0, "a document's text must not be empty"),
);

export const DocumentsBody = v.strictObject({
  documents: v.pipe(v.array(DocumentBody, "documents must be an array"), v.minLength(1, "documents must hold at least one document"), v.maxLength(100, "documents must hold at most 100 documents")),
});
export type DocumentsRequest = v.InferOutput<typeof DocumentsBody>;

export const SearchBody = v.strictObject({
  query: Query,
  max_results: v.optional(wholeNumber("max_results", 1, 50), 10),
  include_domains: v.optional(Domains("include_domains")),
  exclude_domains: v.optional(Domains("exclude_domains")),
  max_tokens: v.optional(wholeNumber("max_tokens", 50, 20_000)),
});
export type SearchRequest = v.InferOutput<typeof SearchBody>;

export const CollectionResponse = v.object({
  name: v.string(),
  description: v.nullable(v.string()),
  documents: Count,
  passages: Count,
  bytes: v.pipe(Count, v.description("The text the collection holds (titles, headings and passages), in UTF-8 bytes")),
  created_at: v.string(),
  updated_at: v.string(),
});

export const CollectionList = v.object({ collections: v.array(CollectionResponse) });

export const DocumentsAdded = v.object({
  collection: v.string(),
  added: v.array(v.string()),
  replaced: v.array(v.string()),
  unchanged: v.pipe(v.array(v.string()), v.description("Documents sent again with the same content: not indexed again")),
});

const DocumentFields = {
  id: v.string(), url: v.nullable(v.string()), title: v.nullable(v.string()), passages: Count, bytes: Count,
  metadata: v.nullable(v.record(v.string(), v.unknown())), updated_at: v.string(),
};

export const DocumentResponse = v.object({
  ...DocumentFields,
  citation: v.pipe(v.string(), v.description("How search and research cite it: its http(s) URL, else quarry://collections/{name}/documents/{id}")),
  text: v.pipe(v.array(v.object({ heading: v.nullable(v.string()), text: v.string() })), v.description("Its passages in order, each with the heading it stands under: the text as indexed")),
});

export const DocumentList = v.object({
  documents: v.array(v.object(DocumentFields)),
  next: v.pipe(v.nullable(v.string()), v.description("The absolute URL of the next 100 documents, or null")),
});

export const Removed = v.object({ name: v.string(), deleted: v.literal(true) });
export const DocumentRemoved = v.object({ id: v.string(), deleted: v.literal(true) });

export const SearchResponse = v.object({
  meta: v.object({
    collection: v.string(), query: v.string(), results_count: Count,
    ranking: v.pipe(v.picklist(["lexical", "hybrid"]), v.description("`hybrid` when the embeddings model (QUARRY_EMBEDDINGS_URL) re-ranked the best passages with BM25, `lexical` for BM25 alone")),
    embeddings_error: v.optional(v.pipe(v.string(), v.description("Why the configured embeddings model could not be used for this search (BM25 answered alone)"))),
    duration_ms: Count,
  }),
  results: v.array(v.object({
    id: v.string(),
    url: v.nullable(v.string()),
    title: v.nullable(v.string()),
    score: v.pipe(v.number(), v.description("0–1: the document's best passage against the answer's best")),
    passages: v.array(v.object({ text: v.string(), heading: v.nullable(v.string()), score: v.number() })),
  })),
});
