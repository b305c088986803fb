/**
 * The MCP tools, derived from the route table: each tool is a native REST route, its input
 * schema generated from the route's valibot body schema and its description from the route's
 * own, so the REST API, the OpenAPI document and the tools cannot disagree. A tool appears as
 * soon as its route exists (map, crawl and batch scrape arrive with the site-level operations).
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type { RouteDef } from "../../gateway/route.ts";
import { FIELD_WORDS } from "./fields.ts";

interface ToolSpec {
  name: string;
  operationId: string;
  /** Request fields a tool call does not offer (e.g. research's `stream`: a tool answers once). */
  omit?: string[];
  /** When to choose this tool over the others, for the model reading the list. */
  when: string;
}

const SPECS: ToolSpec[] = [
  { name: "search", operationId: "search", when: "Use to find web pages about something; then read the best ones with scrape, or ask for tier summary/full to get their text at once." },
  { name: "scrape", operationId: "scrape", when: "Use to read one page whose URL you already have." },
  { name: "map", operationId: "map", when: "Use to list the URLs of a site before choosing which to read." },
  { name: "crawl", operationId: "crawl", when: "Use to read many pages of one site: it starts a job and answers its id; poll it with crawl_status." },
  { name: "crawl_status", operationId: "crawlStatus", when: "Use to read the pages a crawl job has fetched so far (100 per call), and whether it has finished." },
  { name: "crawl_cancel", operationId: "crawlCancel", when: "Use to stop a crawl job." },
  { name: "batch_scrape", operationId: "batchScrape", when: "Use to read a known list of URLs in one job: it answers the job's id; poll it with batch_scrape_status." },
  { name: "batch_scrape_status", operationId: "batchScrapeStatus", when: "Use to read the pages a batch scrape job has fetched so far, and whether it has finished." },
  { name: "batch_scrape_cancel", operationId: "batchScrapeCancel", when: "Use to stop a batch scrape job; what it has read stays readable with batch_scrape_status." },
  { name: "collection_search", operationId: "collectionSearch", when: "Use to search a collection this account has filled (a site crawled or documents added): cited passages from its own index, without the web engines." },
  { name: "video_search", operationId: "videoSearch", when: "Use to find videos (YouTube) and what is said in them, with transcript excerpts." },
  { name: "social_research", operationId: "socialResearch", when: "Use to learn what people say about something on Hacker News, Stack Exchange, GitHub, Reddit and other communities." },
  { name: "research", operationId: "research", omit: ["stream"], when: "Use for a question that needs several sources: it searches, reads and answers with a cited report. Slower than search." },
];

export interface Tool {
  name: string;
  query: string[];
  /** Request fields of the route this tool does not offer: an argument by that name is refused. */
  omitted: string[];
  description: string;
  inputSchema: { type: "object"; properties: Record<string, Record<string, unknown>>; required?: string[]; [k: string]: unknown };
  route: RouteDef;
}

function inputSchema(route: RouteDef, omit: string[], query: Record<string, string>): Tool["inputSchema"] {
  const { $schema: _s, ...schema } = (route.body ? toJsonSchema(route.body, { errorMode: "ignore" }) : { type: "object", properties: {} }) as Record<string, unknown>;
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
    if (omit.includes(name)) continue;
    properties[name] = FIELD_WORDS[name] && !prop.description ? { ...prop, description: FIELD_WORDS[name] } : prop;
  }
  const required = ((schema.required ?? []) as string[]).filter((r) => !omit.includes(r));
  // Path parameters (a job id) are tool arguments too.
  for (const [name, words] of Object.entries(route.params ?? {})) {
    properties[name] = { type: "string", description: words };
    required.push(name);
  }
  for (const [name, words] of Object.entries(query)) properties[name] = { type: "integer", minimum: 0, description: words };
  return { ...schema, type: "object", properties, ...(required.length ? { required } : {}) };
}

/** The tools whose routes exist in this app, in a stable order. */
export function toolsFrom(routes: RouteDef[]): Tool[] {
  const byId = new Map(routes.filter((r) => r.operationId).map((r) => [r.operationId!, r]));
  return SPECS.flatMap((spec) => {
    const route = byId.get(spec.operationId);
    if (!route) return [];
    const cost = route.group ? ` Costs one unit of the key's \`${route.group}\` quota group; needs the \`${route.scope}\` scope.` : "";
    return [{
      name: spec.name,
      description: `${route.summary}. ${spec.when}${route.description ? `\n\n${route.description}` : ""}${cost}`,
      // The route's query parameters (a job's `skip`) are tool arguments too.
      inputSchema: inputSchema(route, spec.omit ?? [], route.query ?? {}),
      query: Object.keys(route.query ?? {}),
      omitted: spec.omit ?? [],
      route,
    }];
  });
}

/** A field a tool call got wrong, worded as the native validation words it. */
export interface ArgumentProblem {
  field: string;
  message: string;
}

export type NativeCallOf = { path: string; body: Record<string, unknown> | undefined } | { problems: ArgumentProblem[] };

/**
 * A tool call as the native request it stands for: path parameters filled in, the rest the body.
 * A tool without a body (a job's status or cancel) has no body schema to refuse what it does not
 * take, and a missing id would leave a path naming another route (`GET /v1/crawl` is a 405): so
 * its arguments are checked here, in the words the native validation uses.
 */
export function nativeRequest(tool: Tool, args: Record<string, unknown>): NativeCallOf {
  const body = { ...args };
  const problems: ArgumentProblem[] = [];
  const path = tool.route.path.replace(/:([a-z_]+)/g, (_m, name: string) => {
    const value = body[name];
    delete body[name];
    if (value === undefined) problems.push({ field: name, message: `${name} is required` });
    else if (typeof value !== "string") problems.push({ field: name, message: `${name} must be a string` });
    else if (value === "") problems.push({ field: name, message: `${name} must not be empty` });
    return encodeURIComponent(typeof value === "string" ? value : "");
  });
  const search = new URLSearchParams();
  for (const name of tool.query) {
    if (body[name] !== undefined) search.set(name, String(body[name]));
    delete body[name];
  }
  if (!tool.route.body) for (const name of Object.keys(body)) problems.push({ field: name, message: "unknown field" });
  // research's `stream` would answer an event stream, which a tool result cannot carry.
  else for (const name of tool.omitted) if (name in body) problems.push({ field: name, message: "unknown field" });
  if (problems.length) return { problems };
  return { path: search.size ? `${path}?${search}` : path, body: tool.route.body ? body : undefined };
}
