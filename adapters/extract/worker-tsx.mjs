// Node, running from the TypeScript sources (no dist/ build): the worker loads them through tsx.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
