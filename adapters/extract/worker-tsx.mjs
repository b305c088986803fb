// Node, running from the TypeScript sources (no dist/ build): the worker loads them through tsx.
// The HTML libraries are plain JavaScript: loaded before tsx's hooks are registered, their
// modules skip the hooks' round trips to the loader thread (about a third of the worker's start).
await Promise.all([import("linkedom"), import("@mozilla/readability"), import("turndown")]);
const { register } = await import("tsx/esm/api");
register();
await import("./worker.ts");
