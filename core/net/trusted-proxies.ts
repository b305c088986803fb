/**
 * QUARRY_TRUST_PROXY: whose X-Forwarded-For to believe. `false` (default) believes nobody;
 * `true` believes every peer, which lets any client that reaches the port directly choose its
 * own address; a list of addresses and CIDRs believes only those peers, and walks the header
 * from the right past every listed proxy to the first address that is not one.
 */
import { allowsAddress, AllowListError, parseAllowList, type AllowList } from "./allow-list.ts";

export type TrustProxy = boolean | AllowList;

/** Parses the variable's text; throws an Error whose message names the bad entry. */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const text = (raw ?? "").trim();
  const lower = text.toLowerCase();
  if (["", "0", "false", "no", "off"].includes(lower)) return false;
  if (["1", "true", "yes", "on"].includes(lower)) return true;
  let list: AllowList;
  try {
    list = parseAllowList(text);
  } catch (e) {
    if (e instanceof AllowListError) throw new Error(`"${e.entry}" is not an IP address or CIDR (expected true, false or a list such as 10.0.0.0/8,192.168.1.7)`);
    throw e;
  }
  const named = [...list.hosts, ...list.suffixes];
  if (named.length) throw new Error(`"${named[0].replace(/^\./, "*.")}" is not an IP address or CIDR (expected true, false or a list such as 10.0.0.0/8,192.168.1.7)`);
  return list;
}

/** Whether a direct peer at `ip` is a proxy whose forwarding headers count. */
export function isTrustedProxy(trust: TrustProxy, ip: string | undefined): boolean {
  if (typeof trust === "boolean") return trust;
  return ip !== undefined && allowsAddress(trust, ip);
}

/** The client address for a request from `peer` carrying `forwardedFor` (the X-Forwarded-For value). */
export function clientAddress(trust: TrustProxy, peer: string | undefined, forwardedFor: string | null): string | undefined {
  if (!forwardedFor || !isTrustedProxy(trust, peer)) return peer;
  const hops = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean);
  if (trust === true) return hops.pop() ?? peer;
  // Right to left: each listed proxy vouches for the entry before it; the first unlisted one is the client.
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!isTrustedProxy(trust, hops[i])) return hops[i];
  }
  return hops[0] ?? peer;
}
