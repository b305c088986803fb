/**
 * Libraries that cost start-up time or memory (HTML parsing and readability, markdown, the
 * tokenizer's tables) load when first needed rather than when the server starts: the gateway
 * awaits `loadLibraries()` before every metered operation, each operation awaits it too, and
 * the code that uses them stays synchronous once it has resolved.
 */
type Encoding = typeof import("gpt-tokenizer/encoding/o200k_base");

interface Libraries {
  linkedom: typeof import("linkedom");
  readability: typeof import("@mozilla/readability");
  /** The TurndownService class (a CommonJS export, default-imported). */
  turndown: typeof import("turndown");
}

let libraries: Libraries | null = null;
let loadingDom: Promise<void> | null = null;
let loading: Promise<void> | null = null;
let ready = false;
let encoding: Encoding | null = null;
let loadingTokenizer: Promise<void> | null = null;

/** Loads the tokenizer's o200k_base tables once (core/budget/tokens.ts counts with them); cheap after the first call. */
export function loadTokenizer(): Promise<void> {
  if (encoding) return Promise.resolve();
  loadingTokenizer ??= import("gpt-tokenizer/encoding/o200k_base").then((m) => {
    encoding = m;
  });
  return loadingTokenizer;
}

/** Whether the tables are in memory (a crawl never needs them: see core/jobs/page-work.ts). */
export function tokenizerLoaded(): boolean {
  return encoding !== null;
}

/** The loaded encoding; calling this before `loadTokenizer()` resolved is a bug, said plainly. */
export function tokenizer(): Encoding {
  if (!encoding) throw new Error("the tokenizer is not loaded yet: await loadTokenizer() before counting tokens");
  return encoding;
}

/** The HTML libraries alone (an extraction worker needs no tokenizer). */
export function loadExtractLibraries(): Promise<void> {
  if (libraries) return Promise.resolve();
  loadingDom ??= Promise.all([import("linkedom"), import("@mozilla/readability"), import("turndown")]).then(
    ([linkedom, readability, turndown]) => {
      const module = turndown as unknown as { default?: Libraries["turndown"] };
      libraries = { linkedom, readability, turndown: (module.default ?? turndown) as Libraries["turndown"] };
    },
  );
  return loadingDom;
}

/** Whether `loadLibraries()` has resolved: the gateway then passes on without awaiting it. */
export function librariesLoaded(): boolean {
  return ready;
}

export function loadLibraries(): Promise<void> {
  if (ready) return Promise.resolve();
  loading ??= Promise.all([loadExtractLibraries(), loadTokenizer()]).then(() => void (ready = true));
  return loading;
}

/** A loaded library; calling this before `loadLibraries()` resolved is a bug, said plainly. */
export function lib<K extends keyof Libraries>(name: K): Libraries[K] {
  if (!libraries) throw new Error(`${name} is not loaded yet: await loadLibraries() first`);
  return libraries[name];
}

interface DocumentLibraries {
  /** DOCX → semantic HTML (headings, lists, tables, links). */
  mammoth: typeof import("mammoth");
  /** Zip archives: the other office formats are zipped XML. */
  fflate: typeof import("fflate");
}

let documents: Promise<DocumentLibraries> | null = null;

/** The office-document libraries, loaded the first time a document is read (most servers never read one). */
export function documentLibraries(): Promise<DocumentLibraries> {
  documents ??= Promise.all([import("mammoth"), import("fflate")]).then(([mammoth, fflate]) => {
    const m = mammoth as unknown as { default?: DocumentLibraries["mammoth"] };
    return { mammoth: (m.default ?? mammoth) as DocumentLibraries["mammoth"], fflate };
  });
  return documents;
}
