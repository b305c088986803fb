/** Scopes (api.md §2). `keys` manages keys; the other three gate the operations. */
export const SCOPES = ["search", "research", "scrape", "keys"] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The no-escalation rule: a key may only grant scopes it holds itself. */
export function escalatedScopes(requested: readonly string[], held: readonly string[]): string[] {
  return requested.filter((s) => !held.includes(s));
}
