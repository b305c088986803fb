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

/**
 * The management rule: a key may see and revoke only keys whose scopes are all among its own.
 * Creation and revocation follow the same line, so a lesser key (say a leaked `search,keys` one)
 * can neither mint nor disable a stronger key, nor learn that one exists.
 */
export function canManage(manager: readonly string[], target: readonly string[]): boolean {
  return escalatedScopes(target, manager).length === 0;
}
