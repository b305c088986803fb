/**
 * Admission beside the key's confirmation (issue #33, PostgreSQL + Redis). Every authenticated
 * request reads the key store's change mark (keys/authenticate.ts: one read a turn, in the key
 * store's database) before it may trust the key this process holds in memory, and only then asked
 * for its admission (in the counters' store): two round trips in a row. A request without a body
 * whose key this process holds asks for both at once instead, the admission made for the key and
 * plan held, and answers nothing before the mark confirms them:
 * - the mark confirms the key, its scope and its limits (per minute, quota): the admission
 *   stands, exactly the one the ordinary order would have made after the read;
 * - the key is refused (revoked, unknown) or the store cannot be read: the admission is taken back
 *   whole (`Counters.withdraw`: its window entry and reservation), then the refusal is answered;
 * - the key's scope or limits changed: the admission is taken back, and the request goes the
 *   ordinary way with what the mark confirmed.
 * So a revoked key still fails on its next request, and a refused request counts toward nothing
 * once answered. While an admission that is taken back stands (one round trip, only when the very
 * key changed under it), it counts in its key's window and quota as a request in flight does.
 *
 * Only counters that can take an admission back (`withdraw`: Redis) are asked this way; a request
 * with a body is validated before its admission, as before, and goes the ordinary way.
 */
import type { Context } from "hono";
import type { Authenticated, Authenticator } from "../keys/authenticate.ts";
import type { AccountPlans } from "../limits/plans.ts";
import type { AdmitRequest, AdmitResult, Clock, Counters, Logger } from "../ports.ts";
import type { AppEnv } from "./context.ts";
import { admit, admitRequest, type LastUsedTracker } from "./guard.ts";
import { checkQuery } from "./query.ts";
import type { Answer } from "./reply.ts";
import type { RouteDef } from "./route.ts";

/** What it needs of the pipeline's dependencies (gateway/pipeline.ts's PipelineDeps extends it). */
export interface BesideDeps {
  auth: Authenticator;
  planOf: AccountPlans;
  counters: Counters;
  clock: Clock;
  lastUsed: LastUsedTracker;
  logger: Logger;
}

/**
 * Authenticates and admits `r`'s request with the admission asked beside the mark's read, then
 * answers it through `answer` and hands its answer on (as `admit` does). Null, having answered nothing and counted
 * nothing, when the request goes the ordinary way instead.
 */
export async function admitBeside(
  c: Context<AppEnv>,
  r: RouteDef,
  deps: BesideDeps,
  query: Readonly<Record<string, string>> | null,
  answer: () => Promise<Answer>,
): Promise<Answer | null> {
  const { auth, planOf, counters, clock } = deps;
  const header = c.req.header("authorization");
  const held = auth.cached(header);
  if (!held || (r.scope !== null && !held.key.scopes.includes(r.scope))) return null;
  if (query) {
    try {
      checkQuery(c, query, r.path);
    } catch {
      return null;
    }
  }
  const plan = planOf(held.account.name, held.account.plan);
  const withUsage = r.readsUsage === true;
  const req = admitRequest(held.key.id, plan, clock.now(), r.group, withUsage, true);
  const result = counters.admit(req);
  // Awaited only once the mark is read: a refusal meanwhile (Redis down) must not count as unhandled.
  result.catch(noop);
  let confirmed: Authenticated;
  try {
    confirmed = await auth.authenticate(header);
  } catch (err) {
    await takeBack(counters, req, result, deps);
    throw err;
  }
  const now = planOf(confirmed.account.name, confirmed.account.plan);
  if (confirmed.key.id !== held.key.id || now.perMinute !== plan.perMinute || now.quota !== plan.quota || (r.scope !== null && !confirmed.key.scopes.includes(r.scope))) {
    await takeBack(counters, req, result, deps);
    return null;
  }
  c.set("auth", { key: confirmed.key, account: confirmed.account, plan: now, mark: confirmed.mark });
  return admit(c, counters, clock, r.group, deps.lastUsed, deps.logger, answer, withUsage, { req, result });
}

function noop(): void {}

/** The admission made for nothing, taken back before the request is answered otherwise. */
async function takeBack(counters: Counters, req: AdmitRequest, result: Promise<AdmitResult>, deps: BesideDeps): Promise<void> {
  const admitted = await result.catch(() => null);
  if (!admitted?.ok) return;
  try {
    await counters.withdraw!(req, admitted);
  } catch (err) {
    deps.logger.warn({ key_id: req.keyId, err: String(err) }, "could not take back an admission made beside its key's confirmation");
  }
}
