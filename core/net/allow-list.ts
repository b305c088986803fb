/**
 * QUARRY_EGRESS_ALLOW (api.md §1): CIDRs and hostnames that page fetches may reach although they
 * are not public. Entries: `10.0.0.0/8`, `::1/128`, a bare address (`10.1.2.3`, `[::1]`), a
 * hostname (`intranet.local`, exact) or `*.corp.example` (any name below it, not the name itself).
 *
 * An allowed hostname skips the address check for that name, whatever it resolves to; an allowed
 * CIDR admits addresses inside it whatever name led there. Ports are not part of an entry.
 */
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr, type IpAddress } from "./address-policy.ts";

export interface AllowList {
  readonly cidrs: readonly Cidr[];
  /** Exact hostnames, lowercase, without a trailing dot. */
  readonly hosts: readonly string[];
  /** `*.corp.example` is stored as `.corp.example`. */
  readonly suffixes: readonly string[];
}

export const EMPTY_ALLOW_LIST: AllowList = Object.freeze({ cidrs: [], hosts: [], suffixes: [] });

export class AllowListError extends Error {
  constructor(readonly entry: string, problem: string) {
    super(`QUARRY_EGRESS_ALLOW entry "${entry}": ${problem}`);
    this.name = "AllowListError";
  }
}

const HOST_LABELS = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** A hostname as the WHATWG URL parser would spell it (lowercase, punycode), minus a trailing dot. */
export function normalizeHostname(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.endsWith(".")) name = name.slice(0, -1);
  try {
    name = new URL(`http://${name}/`).hostname;
  } catch {
    // left as is; the caller validates
  }
  return name;
}

function parseEntry(entry: string, out: { cidrs: Cidr[]; hosts: string[]; suffixes: string[] }): void {
  const bracketed = /^\[([^\]]+)\](\/\d+)?$/.exec(entry);
  const cidr = parseCidr(bracketed ? bracketed[1] + (bracketed[2] ?? "") : entry);
  if (cidr) {
    out.cidrs.push(mappedToV4(cidr));
    return;
  }
  if (entry.includes("/")) throw new AllowListError(entry, "not a valid CIDR");
  if (/:\d+$/.test(entry) && !entry.includes("::")) {
    throw new AllowListError(entry, "ports are not supported; list the host or CIDR alone");
  }
  const wildcard = entry.startsWith("*.");
  const name = normalizeHostname(wildcard ? entry.slice(2) : entry);
  if (!HOST_LABELS.test(name)) throw new AllowListError(entry, "not a CIDR, IP address or hostname");
  if (wildcard) out.suffixes.push(`.${name}`);
  else out.hosts.push(name);
}

/** An IPv4-mapped IPv6 block (`::ffff:10.0.0.0/104`) is matched as the IPv4 block it spells. */
function mappedToV4(cidr: Cidr): Cidr {
  const b = cidr.bytes;
  const mapped = cidr.version === 6 && cidr.prefix >= 96 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255;
  return mapped ? { version: 4, bytes: b.slice(12), prefix: cidr.prefix - 96 } : cidr;
}

/** An IPv4-mapped IPv6 address is compared as its IPv4 address. */
function unmapped(ip: IpAddress): IpAddress {
  const b = ip.bytes;
  const mapped = ip.version === 6 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255;
  return mapped ? { version: 4, bytes: b.slice(12) } : ip;
}

/** Parses `"10.0.0.0/8,intranet.local,::1/128"` (or a list of entries). Throws `AllowListError`. */
export function parseAllowList(spec: string | readonly string[] | undefined | null): AllowList {
  const entries = (typeof spec === "string" ? spec.split(",") : (spec ?? [])).map((e) => e.trim()).filter(Boolean);
  const out = { cidrs: [] as Cidr[], hosts: [] as string[], suffixes: [] as string[] };
  for (const entry of entries) parseEntry(entry, out);
  return Object.freeze(out);
}

export function isEmptyAllowList(list: AllowList): boolean {
  return list.cidrs.length === 0 && list.hosts.length === 0 && list.suffixes.length === 0;
}

/** Whether the hostname (as written in a URL; brackets and case do not matter) is listed by name. */
export function allowsHost(list: AllowList, hostname: string): boolean {
  const name = normalizeHostname(hostname.replace(/^\[|\]$/g, ""));
  return list.hosts.includes(name) || list.suffixes.some((s) => name.endsWith(s));
}

/** Whether the address falls inside one of the listed CIDRs. */
export function allowsAddress(list: AllowList, ip: string | IpAddress): boolean {
  const parsed = typeof ip === "string" ? parseIp(ip) : ip;
  if (!parsed) return false;
  const target = unmapped(parsed);
  return list.cidrs.some((c) => cidrContains(c, target));
}

/** The list back as text, for start-up logs. */
export function describeAllowList(list: AllowList): string {
  return [
    ...list.cidrs.map((c) => `${formatIp({ version: c.version, bytes: c.bytes })}/${c.prefix}`),
    ...list.hosts,
    ...list.suffixes.map((s) => `*${s}`),
  ].join(",");
}
