import type { Config } from "../config.ts";
import type { Plan } from "../limits/plans.ts";
import type { Account, KeyRecord, Ports, UsageCount } from "../ports.ts";
import type { Services } from "../services.ts";

export interface AuthInfo {
  key: KeyRecord;
  account: Account;
  plan: Plan;
  /** The key store's change mark this request's authentication read (keys/authenticate.ts); null when the store has none. */
  mark?: string | null;
}

/** What the X-RateLimit-* headers report for this response. */
export interface LimitInfo {
  quota: number | null;
  used: number;
  resetAt: string;
}

export type AppEnv = {
  Variables: {
    requestId: string;
    /** When the gateway took the request: set for the compatibility routes only (gateway/headers.ts, `wrap`). */
    startedAt: number;
    auth: AuthInfo | undefined;
    limits: LimitInfo | undefined;
    /** The key's use of `period` as admission read it, on a route that `readsUsage` and counters that answer it. */
    usage: { period: string; count: UsageCount } | undefined;
    body: unknown;
    /**
     * Gives the request's metered unit back, once. For answers whose status is sent before
     * the work fails (streams): the gateway refunds plain 5xx answers by itself.
     */
    refund: (() => Promise<void>) | undefined;
    /** Set by the error handler when the answer refuses the request before any work (counts toward nothing). */
    refused: boolean | undefined;
    /** Set by admission when the client left before its answer was ready, so its reservation was released uncharged. */
    clientGone: boolean | undefined;
    /** The matched route's pattern (`/v1/keys/:key_id`), for metrics; unset when nothing matched. */
    route: string | undefined;
  };
};

/** What route modules receive: the ports, the config and the shared services. */
export interface AppDeps {
  ports: Ports;
  config: Config;
  services: Services;
}
