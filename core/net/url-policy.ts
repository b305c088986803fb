/**
 * The checks a page fetch makes before (and, for resolved addresses, while) it connects: scheme,
 * credentials, the host as written, and every address the host resolves to. Verdicts are values;
 * the adapters turn a refusal into an `EgressRefused` error.
 *
 * Every refused target (a private literal, `localhost`, a name resolving to a private address, a
 * name that does not resolve) gets the same public message, `REFUSED_TARGET`: telling them apart
 * would let callers probe the operator's internal DNS (issue #19). Which one it was goes into
 * `internal`, for the debug log. Refusals of the URL's shape (scheme, credentials) say what to fix.
 */
import { classifyAddress, describeKind, parseIp, type AddressKind, type IpAddress } from "./address-policy.ts";
import { allowsAddress, allowsHost, EMPTY_ALLOW_LIST, type AllowList } from "./allow-list.ts";

export type RefusalReason = "invalid_url" | "scheme" | "credentials" | "local_hostname" | "non_public_address" | "unresolvable";

/** The one public answer for every target Quarry will not reach. */
export const REFUSED_TARGET =
  "Quarry does not fetch this URL: its host does not resolve to a public address. Operators can allow private hosts with QUARRY_EGRESS_ALLOW.";

export interface Refusal {
  ok: false;
  reason: RefusalReason;
  /** Safe to show the caller. */
  message: string;
  /** For the log only (may name resolved addresses). */
  internal: string;
  kind?: AddressKind;
}

export interface UrlAccepted {
  ok: true;
  url: URL;
  /** The host without IPv6 brackets, ready for a socket or resolver. */
  hostname: string;
  /** The host as an address, when the URL names one literally. */
  literal: IpAddress | null;
  /** The hostname is on the allow-list by name: whatever it resolves to may be reached. */
  allowedByName: boolean;
}

export type UrlCheck = UrlAccepted | Refusal;

function refuse(reason: RefusalReason, message: string, internal = message, kind?: AddressKind): Refusal {
  return { ok: false, reason, message, internal, ...(kind ? { kind } : {}) };
}

/**
 * Scheme (http/https only), no credentials, and a literal IP host that is public or allowed.
 * Hostnames pass here unless they are `localhost` (RFC 6761); their addresses are checked when
 * they resolve (`checkResolved`).
 */
export function checkUrl(input: string | URL, allow: AllowList = EMPTY_ALLOW_LIST): UrlCheck {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return refuse("invalid_url", "The URL is not valid.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return refuse("scheme", `Quarry fetches only http and https URLs; "${url.protocol}" is not allowed.`);
  }
  if (url.username || url.password) {
    return refuse("credentials", "URLs with a user name or password are not fetched; remove the credentials from the URL.");
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  if (!hostname) return refuse("invalid_url", "The URL has no host.");
  const allowedByName = allowsHost(allow, hostname);
  // The WHATWG parser has already turned 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1.
  const literal = parseIp(hostname);
  if (literal && !allowedByName) {
    const verdict = checkAddress(literal, allow);
    if (verdict) {
      return refuse("non_public_address", REFUSED_TARGET, `literal host ${url.hostname} is ${describeKind(verdict)}`, verdict);
    }
  }
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (!literal && !allowedByName && (name === "localhost" || name.endsWith(".localhost"))) {
    return refuse("local_hostname", REFUSED_TARGET, `localhost name ${url.hostname}`, "loopback");
  }
  return { ok: true, url, hostname, literal, allowedByName };
}

/** The kind that makes `ip` unreachable, or `null` when it is public or allowed. */
export function checkAddress(ip: string | IpAddress, allow: AllowList = EMPTY_ALLOW_LIST): AddressKind | null {
  const cls = classifyAddress(ip);
  if (cls.public || allowsAddress(allow, ip)) return null;
  return cls.kind;
}

/**
 * Every address a host resolved to must be public or allowed: one private answer among public
 * ones refuses the whole name, because the connection may use any of them.
 */
export function checkResolved(
  hostname: string,
  addresses: readonly string[],
  allow: AllowList = EMPTY_ALLOW_LIST,
): { ok: true } | Refusal {
  if (allowsHost(allow, hostname)) return { ok: true };
  for (const address of addresses) {
    const kind = checkAddress(address, allow);
    if (kind) {
      return refuse(
        "non_public_address",
        REFUSED_TARGET,
        `${hostname} resolved to ${address} (${kind}); all answers: ${addresses.join(", ")}`,
        kind,
      );
    }
  }
  return { ok: true };
}

/** A name that did not resolve: refused with the same answer as a private one (see above). */
export function unresolvable(hostname: string, detail: string): Refusal {
  return refuse("unresolvable", REFUSED_TARGET, `${hostname} did not resolve: ${detail}`);
}
