/** The pure egress policy (core/net): address parsing and classes, CIDRs, the allow-list, URL checks. */
import { describe, expect, it } from "vitest";
import {
  classifyAddress,
  formatIp,
  isPublicAddress,
  parseCidr,
  parseIp,
  parseIPv4,
  type AddressKind,
} from "../../core/net/address-policy.ts";
import { AllowListError, allowsAddress, allowsHost, describeAllowList, parseAllowList } from "../../core/net/allow-list.ts";
import { checkResolved, checkUrl } from "../../core/net/url-policy.ts";

describe("IPv4 spellings", () => {
  it.each([
    ["127.0.0.1", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["127.0.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["0X7F.1", "127.0.0.1"],
    ["0x7f.0.0.1", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["017700000001", "127.0.0.1"],
    ["0", "0.0.0.0"],
    ["0x", "0.0.0.0"],
    ["10.1", "10.0.0.1"],
    ["192.168.257", "192.168.1.1"],
    ["127.0.0.1.", "127.0.0.1"],
    ["4294967295", "255.255.255.255"],
  ])("%s → %s", (text, canonical) => {
    const ip = parseIp(text);
    expect(ip?.version).toBe(4);
    expect(formatIp(ip!)).toBe(canonical);
  });

  it.each(["256.0.0.1", "4294967296", "1.2.3.4.5", "08.0.0.1", "0x1g", "1..2", "", "example.com", "1.2.3.256", "1.16777216", "1.2.65536"])(
    "%s is not an IPv4 address",
    (text) => expect(parseIPv4(text)).toBeNull(),
  );
});

describe("IPv6 spellings", () => {
  it.each([
    ["::1", "::1"],
    ["[::1]", "::1"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["::", "::"],
    ["::ffff:127.0.0.1", "::ffff:127.0.0.1"],
    ["::ffff:7f00:1", "::ffff:127.0.0.1"],
    ["::FFFF:7F00:0001", "::ffff:127.0.0.1"],
    ["fe80::1%eth0", "fe80::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:0db8:0000:0000:0000:0000:0002:0001", "2001:db8::2:1"],
    ["64:ff9b::10.0.0.1", "64:ff9b::a00:1"],
  ])("%s → %s", (text, canonical) => {
    const ip = parseIp(text);
    expect(ip?.version).toBe(6);
    expect(formatIp(ip!)).toBe(canonical);
  });

  it.each([":::", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", ":1::", "::1.2.3", "::g", "1:2:3:4:5:6:7"])("%s is not an address", (text) =>
    expect(parseIp(text)).toBeNull(),
  );
});

const TABLE: [string, AddressKind][] = [
  // IPv4 public
  ["8.8.8.8", "public"],
  ["1.1.1.1", "public"],
  ["93.184.215.14", "public"],
  ["172.15.255.255", "public"],
  ["172.32.0.0", "public"],
  ["100.63.255.255", "public"],
  ["100.128.0.0", "public"],
  ["192.169.0.1", "public"],
  ["198.17.255.255", "public"],
  ["198.20.0.0", "public"],
  ["223.255.255.255", "public"],
  // IPv4 special
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "this-network"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["100.64.0.1", "shared"],
  ["100.127.255.254", "shared"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link-local"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.0.0.8", "ietf-protocol"],
  ["192.0.2.1", "documentation"],
  ["192.88.99.1", "deprecated"],
  ["192.168.1.1", "private"],
  ["198.18.0.1", "benchmark"],
  ["198.19.255.255", "benchmark"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.254", "reserved"],
  ["255.255.255.255", "broadcast"],
  // odd IPv4 spellings
  ["2130706433", "loopback"],
  ["0x7f.1", "loopback"],
  ["0177.0.0.1", "loopback"],
  ["0xa9fea9fe", "link-local"],
  // IPv6 public
  ["2606:4700:4700::1111", "public"],
  ["2a00:1450:4001:81c::200e", "public"],
  ["::ffff:8.8.8.8", "public"],
  ["64:ff9b::8.8.8.8", "public"],
  ["2002:808:808::1", "public"],
  // IPv6 special
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["fe80::1", "link-local"],
  ["febf:ffff::1", "link-local"],
  ["fec0::1", "site-local"],
  ["fc00::1", "unique-local"],
  ["fd12:3456:789a::1", "unique-local"],
  ["ff02::1", "multicast"],
  ["2001:db8::1", "documentation"],
  ["3fff::1", "documentation"],
  ["100::1", "discard"],
  ["2001:2::1", "benchmark"],
  ["2001:10::1", "deprecated"],
  ["2001:20::1", "ietf-protocol"],
  ["5f00::1", "reserved"],
  ["4000::1", "reserved"],
  ["64:ff9b:1::1", "private"],
  // IPv4 inside IPv6
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "link-local"],
  ["::ffff:0.0.0.0", "unspecified"],
  ["::127.0.0.1", "loopback"],
  ["::8.8.8.8", "deprecated"],
  ["64:ff9b::127.0.0.1", "loopback"],
  ["64:ff9b::a9fe:a9fe", "link-local"],
  ["64:ff9b::192.168.0.1", "private"],
  ["2002:7f00:1::1", "loopback"],
  ["2002:a00:1::", "private"],
  ["2002:c0a8:101::1", "private"],
  // Teredo: client 127.0.0.1 is stored inverted (80ff:fffe); server 192.0.2.1
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"],
  ["2001:0:c000:201::f7f7:f7f7", "documentation"],
  ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "public"],
];

describe("classifyAddress", () => {
  it.each(TABLE)("%s is %s", (address, kind) => {
    const cls = classifyAddress(address);
    expect(cls.kind).toBe(kind);
    expect(cls.public).toBe(kind === "public");
    expect(isPublicAddress(address)).toBe(kind === "public");
  });

  it("names the embedding and the embedded address", () => {
    expect(classifyAddress("64:ff9b::7f00:1")).toMatchObject({ via: "nat64", embedded: "127.0.0.1", range: "64:ff9b::/96 embedding 127.0.0.0/8" });
    expect(classifyAddress("::ffff:7f00:1")).toMatchObject({ via: "ipv4-mapped", embedded: "127.0.0.1" });
    expect(classifyAddress("2002:c0a8:101::1")).toMatchObject({ via: "6to4", embedded: "192.168.1.1" });
    expect(classifyAddress("2001:0:4136:e378:8000:63bf:80ff:fffe")).toMatchObject({ via: "teredo", embedded: "127.0.0.1" });
  });

  it("treats what is not an address as never public", () => {
    expect(isPublicAddress("example.com")).toBe(false);
    expect(isPublicAddress("")).toBe(false);
  });
});

describe("CIDR and the allow-list", () => {
  it("parses CIDRs and clears host bits", () => {
    expect(parseCidr("10.1.2.3/8")).toMatchObject({ version: 4, prefix: 8, bytes: new Uint8Array([10, 0, 0, 0]) });
    expect(parseCidr("fd00::1/8")?.prefix).toBe(8);
    expect(parseCidr("10.0.0.0/33")).toBeNull();
    expect(parseCidr("::/129")).toBeNull();
    expect(parseCidr("10.0.0.0/x")).toBeNull();
  });

  const list = parseAllowList("10.0.0.0/8, intranet.local,::1/128, *.corp.example, 172.20.0.5, [fd00::]/8, ::ffff:192.168.0.0/112, 100.64.0.0/10");

  it.each([
    ["10.0.0.1", true],
    ["10.255.255.255", true],
    ["11.0.0.0", false],
    ["9.255.255.255", false],
    ["::1", true],
    ["::2", false],
    ["172.20.0.5", true],
    ["172.20.0.6", false],
    ["fd12::1", true],
    ["fe80::1", false],
    ["192.168.3.4", true],
    ["::ffff:10.1.2.3", true],
    ["::ffff:192.168.9.9", true],
    ["100.100.0.1", true],
    ["100.128.0.1", false],
    ["127.0.0.1", false],
  ])("address %s allowed: %s", (address, allowed) => expect(allowsAddress(list, address)).toBe(allowed));

  it.each([
    ["intranet.local", true],
    ["INTRANET.LOCAL.", true],
    ["www.intranet.local", false],
    ["a.corp.example", true],
    ["a.b.corp.example", true],
    ["corp.example", false],
    ["evilcorp.example", false],
    ["corp.example.evil", false],
  ])("host %s allowed: %s", (host, allowed) => expect(allowsHost(list, host)).toBe(allowed));

  it("accepts a list of entries and reads back", () => {
    expect(describeAllowList(parseAllowList(["127.0.0.1", "allowed.test", "*.x.test"]))).toBe("127.0.0.1/32,allowed.test,*.x.test");
    expect(describeAllowList(parseAllowList(""))).toBe("");
    expect(describeAllowList(parseAllowList(undefined))).toBe("");
  });

  it.each(["10.0.0.0/40", "intranet.local:8080", "127.0.0.1:8080", "bad host", "a/b", "http://x"])("rejects %s", (entry) =>
    expect(() => parseAllowList(entry)).toThrow(AllowListError),
  );
});

describe("checkUrl", () => {
  it.each([
    ["file:///etc/passwd", "scheme"],
    ["ftp://example.com/", "scheme"],
    ["data:text/html,hi", "scheme"],
    ["javascript:alert(1)", "scheme"],
    ["gopher://example.com/", "scheme"],
    ["ws://example.com/", "scheme"],
    ["http://user:pw@example.com/", "credentials"],
    ["http://user@example.com/", "credentials"],
    ["not a url", "invalid_url"],
    ["http://127.0.0.1/", "non_public_address"],
    ["http://127.1/", "non_public_address"],
    ["http://2130706433/", "non_public_address"],
    ["http://0x7f000001/", "non_public_address"],
    ["http://0177.0.0.1/", "non_public_address"],
    ["http://[::1]/", "non_public_address"],
    ["http://[::ffff:127.0.0.1]/", "non_public_address"],
    ["http://[::ffff:7f00:1]/", "non_public_address"],
    ["http://[64:ff9b::7f00:1]/", "non_public_address"],
    ["http://0.0.0.0/", "non_public_address"],
    ["http://0/", "non_public_address"],
    ["http://169.254.169.254/latest/meta-data/", "non_public_address"],
    ["http://[fd00::1]/", "non_public_address"],
    ["http://localhost/", "local_hostname"],
    ["http://LocalHost./", "local_hostname"],
    ["http://api.localhost/", "local_hostname"],
  ])("refuses %s (%s)", (url, reason) => {
    const check = checkUrl(url);
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.reason).toBe(reason);
      expect(check.message.length).toBeGreaterThan(10);
    }
  });

  it("answers every refused target with one public message; the detail is internal only", () => {
    const literal = checkUrl("http://0x7f.1:8080/x");
    const local = checkUrl("http://localhost/");
    const resolved = checkResolved("db.internal", ["10.0.0.7"]);
    for (const check of [literal, local, resolved]) {
      expect(!check.ok && check.message).toBe(
        "Quarry does not fetch this URL: its host does not resolve to a public address. Operators can allow private hosts with QUARRY_EGRESS_ALLOW.",
      );
    }
    expect(!literal.ok && literal.internal).toContain("loopback");
    expect(!resolved.ok && resolved.internal).toContain("10.0.0.7");
  });

  it.each(["http://example.com/", "https://8.8.8.8/", "http://[2606:4700:4700::1111]/", "HTTP://Example.COM:8080/a?b#c"])("accepts %s", (url) =>
    expect(checkUrl(url).ok).toBe(true),
  );

  it("lets the allow-list through by address or by name", () => {
    const allow = parseAllowList("127.0.0.0/8,localhost,intranet.local");
    expect(checkUrl("http://127.1/", allow).ok).toBe(true);
    expect(checkUrl("http://localhost/", allow).ok).toBe(true);
    expect(checkUrl("http://[::1]/", allow).ok).toBe(false);
    const ok = checkUrl("http://Intranet.Local:81/", allow);
    expect(ok).toMatchObject({ ok: true, hostname: "intranet.local", literal: null, allowedByName: true });
    expect(checkUrl("file:///etc/passwd", allow).ok).toBe(false);
  });

  it("checks every resolved address and hides them from the public message", () => {
    const mixed = checkResolved("mixed.test", ["8.8.8.8", "10.1.2.3"]);
    expect(mixed.ok).toBe(false);
    if (!mixed.ok) {
      expect(mixed.message).toContain("does not resolve to a public address");
      expect(mixed.message).not.toContain("10.1.2.3");
      expect(mixed.internal).toContain("10.1.2.3");
    }
    expect(checkResolved("pub.test", ["8.8.8.8", "2606:4700:4700::1111"]).ok).toBe(true);
    expect(checkResolved("odd.test", ["0x7f.1"]).ok).toBe(false);
    expect(checkResolved("garbage.test", ["not-an-ip"]).ok).toBe(false);
    expect(checkResolved("intranet.local", ["10.0.0.1"], parseAllowList("intranet.local")).ok).toBe(true);
    expect(checkResolved("x.test", ["10.0.0.1"], parseAllowList("10.0.0.0/8")).ok).toBe(true);
  });
});
