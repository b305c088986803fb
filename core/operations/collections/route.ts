/** /v1/collections: the account's own index (api.md §11). */
import type { Context } from "hono";
import { ApiError } from "../../errors.ts";
import type { AppDeps, AppEnv } from "../../gateway/context.ts";
import { skipParam } from "../../gateway/query.ts";
import type { RouteDef } from "../../gateway/route.ts";
import type { CollectionStore } from "../../ports/collections.ts";
import { addDocuments, citationOf, missing, planCaps, searchCollectionRanked, unavailable } from "../../collections/service.ts";
import {
  CollectionList, CollectionResponse, CreateBody, DocumentList, DocumentResponse, DocumentRemoved, DocumentsAdded, DocumentsBody, Removed, SearchBody, SearchResponse,
  type CreateRequest, type DocumentsRequest, type SearchRequest,
} from "./schema.ts";

const PAGE = 100;
/** The documents route's body cap: a hundred documents of the size most are, not a hundred of 1 MB (api.md §11). */
export const DOCUMENTS_BODY_BYTES = 8_000_000;
const NAME = { name: "The collection's name: 1–64 characters of a-z, 0-9, - and _" };

export function collectionRoutes({ ports, config, services }: AppDeps): RouteDef[] {
  const rerank = services.collectionRerank;
  const store = (): CollectionStore => {
    if (!ports.collections) throw unavailable();
    return ports.collections;
  };
  const account = (c: Context<AppEnv>) => c.get("auth")!.account.name;
  const named = async (c: Context<AppEnv>) => {
    const name = c.req.param("name") ?? "";
    const info = await store().get(account(c), name);
    if (!info) throw missing(name);
    return info;
  };
  const common = { auth: true, group: null, errors: ["service_unavailable" as const] };
  return [
    {
      ...common, method: "POST", path: "/v1/collections", operationId: "collectionCreate", scope: "scrape",
      summary: "Create a collection: the account's own searchable index",
      description: "A named set of documents this account fills (scrape, crawl and batch scrape with `collection`, or `POST /v1/collections/{name}/documents`) and searches with `POST /v1/collections/{name}/search`, without asking a web engine. Names are 1–64 characters of a-z, 0-9, - and _; a name the account already uses is a 409 `collection_exists`. Not metered.",
      example: { name: "hono-docs", description: "Hono's documentation" },
      body: CreateBody, status: 201, response: CollectionResponse, errors: ["collection_exists", "service_unavailable"],
      handler: async (c) => {
        const body = c.get("body") as CreateRequest;
        const made = await store().create(account(c), body.name, body.description ?? null, ports.clock.now());
        if (!made) throw new ApiError("collection_exists", `This account already has a collection named "${body.name}".`);
        return c.json(made, 201);
      },
    },
    {
      ...common, method: "GET", path: "/v1/collections", operationId: "collectionList", scope: "scrape",
      summary: "List the account's collections with their sizes", status: 200, response: CollectionList,
      handler: async (c) => c.json({ collections: await store().list(account(c)) }),
    },
    {
      ...common, method: "GET", path: "/v1/collections/:name", operationId: "collectionGet", scope: "scrape", params: NAME,
      summary: "One collection: its documents, passages and bytes", status: 200, response: CollectionResponse, errors: ["not_found", "service_unavailable"],
      handler: async (c) => c.json(await named(c)),
    },
    {
      ...common, method: "DELETE", path: "/v1/collections/:name", operationId: "collectionDelete", scope: "scrape", params: NAME,
      summary: "Delete a collection with every document in it", status: 200, response: Removed, errors: ["not_found", "service_unavailable"],
      handler: async (c) => {
        const name = c.req.param("name") ?? "";
        if (!(await store().remove(account(c), name))) throw missing(name);
        return c.json({ name, deleted: true as const });
      },
    },
    {
      ...common, method: "POST", path: "/v1/collections/:name/documents", operationId: "collectionAddDocuments", scope: "scrape", params: NAME,
      summary: "Add the account's own documents (text or markdown) to a collection",
      description: "Up to 100 documents of up to 1 MB each, `{id?, url?, title?, text | markdown, metadata?}`; a document's id is the one given, else its URL, else a hash of its content. A document sent again under its id replaces the earlier one; one whose content has not changed is not indexed again. The request body may be up to 8 MB (other routes take 64 KiB); a larger one is a 413 `payload_too_large`, nothing added: send more documents in several requests. All or nothing: past the plan's `index_documents` (documents in all the account's collections) or `index_bytes` (bytes of text they hold, as their `bytes` count it; a replaced document counts its difference) the request is a 403 `index_full` whose `limit` names which, and nothing is added. Not metered.",
      example: { documents: [{ id: "faq-1", title: "Refunds", markdown: "# Refunds\n\nRefunds are paid within 14 days." }] },
      body: DocumentsBody, maxBodyBytes: DOCUMENTS_BODY_BYTES, status: 200, response: DocumentsAdded, errors: ["not_found", "index_full", "service_unavailable"],
      handler: async (c) => {
        const name = c.req.param("name") ?? "";
        const body = c.get("body") as DocumentsRequest;
        const docs = body.documents.map((d) => ({ id: d.id, url: d.url ?? null, title: d.title ?? null, markdown: (d.markdown ?? d.text)!, metadata: d.metadata ?? null }));
        const outcome = await addDocuments(store(), account(c), name, docs, planCaps(c.get("auth")!.plan), ports.clock.now());
        return c.json({ collection: name, ...outcome });
      },
    },
    {
      ...common, method: "GET", path: "/v1/collections/:name/documents", operationId: "collectionDocuments", scope: "scrape", params: NAME,
      query: { skip: "Documents to skip: each answer lists at most 100, by id; pass the number already read (or follow `next`)." },
      summary: "List a collection's documents", status: 200, response: DocumentList, errors: ["not_found", "invalid_request", "service_unavailable"],
      handler: async (c) => {
        const info = await named(c);
        const skip = skipParam(c, "documents");
        const documents = await store().documents(account(c), info.name, skip, PAGE);
        const base = config.jobs.publicUrl ?? new URL(c.req.url).origin;
        const next = skip + documents.length < info.documents && documents.length === PAGE ? `${base}/v1/collections/${info.name}/documents?skip=${skip + PAGE}` : null;
        return c.json({ documents, next });
      },
    },
    {
      ...common, method: "GET", path: "/v1/collections/:name/documents/:id", operationId: "collectionGetDocument", scope: "search",
      params: { ...NAME, id: "The document's id (URL-encoded)" },
      summary: "Read one document of a collection: the text a citation of it points to",
      description: "The document's fields and its passages in order, each with its heading, as indexed. A document without an http(s) URL (text the account sent) is cited in search and research as `quarry://collections/{name}/documents/{id}`: this route, under /v1, is where that citation leads. Needs `search`, like the collection search. Not metered.",
      status: 200, response: DocumentResponse, errors: ["not_found", "service_unavailable"],
      handler: async (c) => {
        const info = await named(c);
        const id = c.req.param("id") ?? "";
        const doc = await store().document(account(c), info.name, id);
        if (!doc) throw new ApiError("not_found", `The collection "${info.name}" has no document with this id.`);
        const { text, ...fields } = doc;
        return c.json({ ...fields, citation: citationOf(info.name, doc), text });
      },
    },
    {
      ...common, method: "DELETE", path: "/v1/collections/:name/documents/:id", operationId: "collectionDeleteDocument", scope: "scrape",
      params: { ...NAME, id: "The document's id (URL-encoded)" },
      summary: "Remove one document from a collection", status: 200, response: DocumentRemoved, errors: ["not_found", "service_unavailable"],
      handler: async (c) => {
        const info = await named(c);
        const id = c.req.param("id") ?? "";
        if (!(await store().removeDocument(account(c), info.name, id))) throw new ApiError("not_found", `The collection "${info.name}" has no document with this id.`);
        return c.json({ id, deleted: true as const });
      },
    },
    {
      ...common, method: "POST", path: "/v1/collections/:name/search", operationId: "collectionSearch", scope: "search", group: "search", params: NAME,
      summary: "Search a collection: documents ranked by their best passages, each passage with its heading",
      description: "Full-text search of the account's own index (BM25 on SQLite's FTS5, PostgreSQL's ranked full-text search on PostgreSQL; stemmed, English stop words left out; titles and headings weigh more than the text; with an embeddings model configured, QUARRY_EMBEDDINGS_URL, the best passages are re-ranked by meaning as well, `meta.ranking` `hybrid`). Each result is a document with up to 3 passages of a few hundred tokens, each with the heading it stands under, to cite; `max_tokens` bounds the passages' tokens in all. One unit of the `search` group.",
      example: { query: "how are refunds paid", max_results: 5 },
      body: SearchBody, status: 200, response: SearchResponse, errors: ["not_found", "service_unavailable"],
      handler: async (c) => {
        const t0 = performance.now();
        const info = await named(c);
        const body = c.get("body") as SearchRequest;
        const { results, ranking, embeddingsError } = await searchCollectionRanked(store(), account(c), info.name, body.query, {
          maxResults: body.max_results, includeDomains: body.include_domains, excludeDomains: body.exclude_domains, maxTokens: body.max_tokens, rerank,
        });
        const meta = { collection: info.name, query: body.query, results_count: results.length, ranking, ...(embeddingsError ? { embeddings_error: embeddingsError } : {}), duration_ms: Math.round(performance.now() - t0) };
        return c.json({ meta, results });
      },
    },
  ];
}
