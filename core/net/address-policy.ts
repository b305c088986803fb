/**
 * Which IP addresses a page fetch may reach. Pure and Web-standard: the runtime adapters in
 * `adapters/fetch/` call it on URL hosts before connecting and on every address a resolver
 * returns at connect time.
 *
 * Parsing accepts every spelling a URL parser or `inet_aton` accepts (decimal `2130706433`,
 * hex `0x7f.1`, octal `0177.0.0.1`, short `127.1`), so no odd spelling slips past as "not an
 * IP". Classification follows the IANA special-purpose registries (RFC 6890 and successors):
 * https://www.iana.org/assignments/iana-ipv4-special-registry and …/iana-ipv6-special-registry.
 * IPv6 is default-deny outside global unicast 2000::/3; addresses that embed an IPv4 address
 * (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) are judged by the embedded address.
 */

export interface IpAddress {
  version: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
}

export type AddressKind =
  | "public"
  | "unspecified"
  | "this-network"
  | "loopback"
  | "private"
  | "shared"
  | "link-local"
  | "ietf-protocol"
  | "documentation"
  | "benchmark"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "unique-local"
  | "site-local"
  | "discard"
  | "deprecated";

export interface AddressClass {
  kind: AddressKind;
  public: boolean;
  /** The special-purpose block that matched, e.g. `127.0.0.0/8`; `null` for public addresses. */
  range: string | null;
  /** How an IPv6 address carries an IPv4 one, when it does; the verdict is then the IPv4's. */
  via?: "ipv4-mapped" | "ipv4-compatible" | "nat64" | "6to4" | "teredo";
  embedded?: string;
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** One `inet_aton` part: decimal, `0x` hex or leading-zero octal. */
function parseIPv4Part(part: string): number | null {
  if (part === "") return null;
  let radix = 10;
  let digits = part;
  if (/^0x/i.test(part)) {
    radix = 16;
    digits = part.slice(2);
    if (digits === "") return 0; // "0x" is zero for the WHATWG URL parser
  } else if (part.length > 1 && part.startsWith("0")) {
    radix = 8;
    digits = part.slice(1);
  }
  const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return null;
  // Overlong inputs parse to huge floats, which the range checks below reject.
  return parseInt(digits, radix);
}

/** IPv4 in any spelling `inet_aton` or the WHATWG URL parser accepts (one trailing dot allowed). */
export function parseIPv4(input: string): Uint8Array | null {
  const text = input.endsWith(".") ? input.slice(0, -1) : input;
  const parts = text.split(".");
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Part(part);
    if (n === null) return null;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return null;
  if (last >= 256 ** (4 - numbers.length)) return null;
  let value = last;
  numbers.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return new Uint8Array([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
}

/** The dotted-quad tail of an IPv6 address: exactly four decimal parts. */
function parseDottedQuad(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  const [a, b, c, d] = parts.map(Number);
  return [(a << 8) | b, (c << 8) | d];
}

function parseGroups(text: string, allowQuad: boolean): number[] | null {
  if (text === "") return [];
  const parts = text.split(":");
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (allowQuad && i === parts.length - 1 && part.includes(".")) {
      const quad = parseDottedQuad(part);
      if (!quad) return null;
      groups.push(...quad);
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      groups.push(parseInt(part, 16));
    } else {
      return null;
    }
  }
  return groups;
}

/** IPv6, with or without brackets; a zone id (`%eth0`) is dropped; `::` and a dotted tail allowed. */
export function parseIPv6(input: string): Uint8Array | null {
  let text = input.startsWith("[") && input.endsWith("]") ? input.slice(1, -1) : input;
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  if (!text.includes(":")) return null;
  const gap = text.indexOf("::");
  if (gap !== text.lastIndexOf("::")) return null;
  let groups: number[];
  if (gap < 0) {
    const all = parseGroups(text, true);
    if (!all || all.length !== 8) return null;
    groups = all;
  } else {
    const head = parseGroups(text.slice(0, gap), false);
    const tail = parseGroups(text.slice(gap + 2), true);
    if (!head || !tail || head.length + tail.length > 7) return null;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 255;
  });
  return bytes;
}

/** Any IPv4 or IPv6 spelling; `null` when the text is not an IP address (a hostname, say). */
export function parseIp(input: string): IpAddress | null {
  const text = input.trim();
  const v6 = parseIPv6(text);
  if (v6) return { version: 6, bytes: v6 };
  const v4 = parseIPv4(text);
  return v4 ? { version: 4, bytes: v4 } : null;
}

/** Canonical text: dotted quad, or RFC 5952 IPv6 (IPv4-mapped written `::ffff:1.2.3.4`). */
export function formatIp(ip: IpAddress): string {
  const b = ip.bytes;
  if (ip.version === 4) return Array.from(b).join(".");
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255) {
    return `::ffff:${Array.from(b.subarray(12)).join(".")}`;
  }
  const groups = Array.from({ length: 8 }, (_, i) => (b[2 * i] << 8) | b[2 * i + 1]);
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

// ---------------------------------------------------------------------------------------------
// CIDR blocks

export interface Cidr {
  version: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

/** `10.0.0.0/8`, `fc00::/7`, or a bare address (a /32 or /128). Host bits are cleared. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.lastIndexOf("/");
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!ip) return null;
  const max = ip.version === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) return null;
    prefix = Number(p);
  }
  const bytes = ip.bytes.slice();
  for (let bit = prefix; bit < max; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  return { version: ip.version, bytes, prefix };
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.version !== ip.version) return false;
  const whole = cidr.prefix >> 3;
  for (let i = 0; i < whole; i++) if (cidr.bytes[i] !== ip.bytes[i]) return false;
  const rest = cidr.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (cidr.bytes[whole] & mask) === (ip.bytes[whole] & mask);
}

function table(rows: [string, AddressKind][]): { cidr: Cidr; range: string; kind: AddressKind }[] {
  return rows.map(([range, kind]) => ({ cidr: parseCidr(range)!, range, kind }));
}

// Most specific first: the first match wins.
const V4_SPECIAL = table([
  ["0.0.0.0/32", "unspecified"],
  ["0.0.0.0/8", "this-network"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "shared"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "ietf-protocol"],
  ["192.0.2.0/24", "documentation"],
  ["192.88.99.0/24", "deprecated"], // 6to4 relay anycast, RFC 7526
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "benchmark"],
  ["198.51.100.0/24", "documentation"],
  ["203.0.113.0/24", "documentation"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "broadcast"],
  ["240.0.0.0/4", "reserved"],
]);

const V6_SPECIAL = table([
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["64:ff9b:1::/48", "private"], // local-use NAT64, RFC 8215
  ["100::/64", "discard"],
  ["2001:2::/48", "benchmark"],
  ["2001:db8::/32", "documentation"],
  ["2001:10::/28", "deprecated"], // ORCHID
  ["2001::/23", "ietf-protocol"],
  ["3fff::/20", "documentation"], // RFC 9637
  ["5f00::/16", "reserved"], // SRv6 SIDs, RFC 9602
  ["fc00::/7", "unique-local"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local"],
  ["ff00::/8", "multicast"],
]);

const GLOBAL_UNICAST = parseCidr("2000::/3")!;
const MAPPED = parseCidr("::ffff:0:0/96")!;
const COMPATIBLE = parseCidr("::/96")!;
const NAT64 = parseCidr("64:ff9b::/96")!;
const SIX_TO_FOUR = parseCidr("2002::/16")!;
const TEREDO = parseCidr("2001::/32")!;

function classifyV4(bytes: Uint8Array): AddressClass {
  const ip: IpAddress = { version: 4, bytes };
  const hit = V4_SPECIAL.find((row) => cidrContains(row.cidr, ip));
  return hit ? { kind: hit.kind, public: false, range: hit.range } : { kind: "public", public: true, range: null };
}

function viaV4(via: NonNullable<AddressClass["via"]>, bytes: Uint8Array, ownRange: string): AddressClass {
  const inner = classifyV4(bytes);
  const embedded = formatIp({ version: 4, bytes });
  return inner.public
    ? { kind: "public", public: true, range: null, via, embedded }
    : { kind: inner.kind, public: false, range: `${ownRange} embedding ${inner.range}`, via, embedded };
}

function classifyV6(bytes: Uint8Array): AddressClass {
  const ip: IpAddress = { version: 6, bytes };
  // ::/128 and ::1/128 sit inside ::/96; the table answers them first.
  const first = V6_SPECIAL.slice(0, 2).find((row) => cidrContains(row.cidr, ip));
  if (first) return { kind: first.kind, public: false, range: first.range };
  if (cidrContains(MAPPED, ip)) return viaV4("ipv4-mapped", bytes.slice(12), "::ffff:0:0/96");
  if (cidrContains(COMPATIBLE, ip)) {
    // Deprecated (RFC 4291 §2.5.5.1): never public, but name the embedded kind when it tells more.
    const inner = viaV4("ipv4-compatible", bytes.slice(12), "::/96");
    return inner.public ? { ...inner, kind: "deprecated", public: false, range: "::/96" } : inner;
  }
  if (cidrContains(NAT64, ip)) return viaV4("nat64", bytes.slice(12), "64:ff9b::/96");
  if (cidrContains(SIX_TO_FOUR, ip)) return viaV4("6to4", bytes.slice(2, 6), "2002::/16");
  if (cidrContains(TEREDO, ip)) {
    // RFC 4380 §4: the client's IPv4 is the last 32 bits inverted; the server's sits in bits 32–63.
    const client = viaV4("teredo", bytes.slice(12).map((x) => ~x & 255), "2001::/32");
    if (!client.public) return client;
    const server = viaV4("teredo", bytes.slice(4, 8), "2001::/32");
    return server.public ? client : server;
  }
  const hit = V6_SPECIAL.find((row) => cidrContains(row.cidr, ip));
  if (hit) return { kind: hit.kind, public: false, range: hit.range };
  if (!cidrContains(GLOBAL_UNICAST, ip)) return { kind: "reserved", public: false, range: "outside 2000::/3" };
  return { kind: "public", public: true, range: null };
}

/** The class of an address; text that is not an IP address is `reserved` and never public. */
export function classifyAddress(ip: string | IpAddress): AddressClass {
  const parsed = typeof ip === "string" ? parseIp(ip) : ip;
  if (!parsed) return { kind: "reserved", public: false, range: "not an IP address" };
  return parsed.version === 4 ? classifyV4(parsed.bytes) : classifyV6(parsed.bytes);
}

/** True only for globally routable unicast addresses a public web page may live on. */
export function isPublicAddress(ip: string | IpAddress): boolean {
  return classifyAddress(ip).public;
}

const KIND_PHRASES: Record<AddressKind, string> = {
  public: "a public address",
  unspecified: "the unspecified address",
  "this-network": "a \"this network\" address",
  loopback: "a loopback address",
  private: "a private address",
  shared: "a shared (carrier-grade NAT) address",
  "link-local": "a link-local address",
  "ietf-protocol": "an IETF protocol address",
  documentation: "a documentation address",
  benchmark: "a benchmarking address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  reserved: "a reserved address",
  "unique-local": "a unique-local (private) address",
  "site-local": "a site-local address",
  discard: "a discard-only address",
  deprecated: "a deprecated special-purpose address",
};

/** "a loopback address", for messages. */
export function describeKind(kind: AddressKind): string {
  return KIND_PHRASES[kind];
}
