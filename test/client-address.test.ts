/**
 * The address a request came from (src/http/client-address.ts, D80): the socket's, or behind a
 * trusted proxy the last X-Forwarded-For hop that is not a trusted proxy; and what limits count
 * it as (D83): an IPv4 address itself, an IPv6 address its /64.
 */
import { describe, expect, test } from "bun:test";
import { addressGroup, clientAddress } from "../src/http/client-address";
import { widerBlock } from "../src/access/window-counts";

const proxies = new Set(["127.0.0.1", "10.0.0.2"]);

describe("the client's address", () => {
  test("from a socket no proxy is trusted at, the socket's: X-Forwarded-For is anyone's to write", () => {
    expect(clientAddress("203.0.113.9", "198.51.100.1", proxies)).toBe("203.0.113.9");
    expect(clientAddress("203.0.113.9", "198.51.100.1", new Set())).toBe("203.0.113.9");
  });

  test("from a trusted proxy, the hop it was reached from", () => {
    expect(clientAddress("127.0.0.1", "198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(clientAddress("::ffff:127.0.0.1", " 198.51.100.1 ", proxies)).toBe("198.51.100.1");
    expect(clientAddress("127.0.0.1", "2001:DB8::7", proxies)).toBe("2001:db8::7");
  });

  test("hops a client wrote before the proxies' do not count: read from the right, past trusted proxies only", () => {
    // The client wrote 192.0.2.66; the first proxy appended the client's own address.
    expect(clientAddress("127.0.0.1", "192.0.2.66, 198.51.100.1", proxies)).toBe("198.51.100.1");
    // Two proxies: the second appended the first's.
    expect(clientAddress("127.0.0.1", "192.0.2.66, 198.51.100.1, 10.0.0.2", proxies)).toBe("198.51.100.1");
  });

  test("a trusted proxy sending no X-Forwarded-For, or only proxies or garbage, is counted as itself or the last good hop", () => {
    expect(clientAddress("127.0.0.1", null, proxies)).toBe("127.0.0.1");
    expect(clientAddress("127.0.0.1", "", proxies)).toBe("127.0.0.1");
    expect(clientAddress("127.0.0.1", "10.0.0.2", proxies)).toBe("10.0.0.2");
    expect(clientAddress("127.0.0.1", "unknown", proxies)).toBe("127.0.0.1");
    expect(clientAddress("127.0.0.1", "198.51.100.1, not-an-address, 10.0.0.2", proxies)).toBe("10.0.0.2");
  });
});

describe("what limits count an address as (D83)", () => {
  test("an IPv6 address is its /64, however it is written; an IPv4 address is itself", () => {
    for (const written of [
      "2001:db8:1:2::1",
      "2001:db8:1:2::ffff",
      "2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd",
      "2001:db8:1:2:0:0:0:9",
    ])
      expect(addressGroup(written.toLowerCase())).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(addressGroup("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
    expect(addressGroup("fe80::1:2:3:4")).toBe("fe80:0:0:0::/64");
    expect(addressGroup("64:ff9b::192.0.2.33")).toBe("64:ff9b:0:0::/64");
    expect(addressGroup("2001:db8:1:2:3:4::")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("203.0.113.9")).toBe("203.0.113.9");
    expect(addressGroup("unknown")).toBe("unknown");
  });

  test("once the names counted are full (D82), an address is counted with its block: an IPv6 /48, an IPv4 /24", () => {
    expect(widerBlock(addressGroup("2001:db8:1:2::1"))).toBe("2001:db8:1::/48");
    expect(widerBlock(addressGroup("2001:0db8:0001:ffff:aaaa::1"))).toBe("2001:db8:1::/48");
    expect(widerBlock(addressGroup("2001:db8::1"))).toBe("2001:db8:0::/48");
    expect(widerBlock(addressGroup("203.0.113.9"))).toBe("203.0.113.0/24");
    expect(widerBlock(addressGroup("unknown"))).toBeUndefined();
  });

  test("behind a trusted proxy, the client it names", () => {
    expect(addressGroup(clientAddress("127.0.0.1", "2001:DB8:1:2::77", proxies))).toBe("2001:db8:1:2::/64");
  });
});
