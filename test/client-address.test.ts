/**
 * The address a request came from (src/http/client-address.ts, D80): the socket's, or behind a
 * trusted proxy the last X-Forwarded-For hop that is not a trusted proxy. What limits count it as
 * is in test/address-blocks.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { clientAddress } from "../src/http/client-address";
import { addressGroup } from "../src/access/address-blocks";

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

  test("behind a trusted proxy, limits count the client it names", () => {
    expect(addressGroup(clientAddress("127.0.0.1", "2001:DB8:1:2::77", proxies))).toBe("2001:db8:1:2::/64");
  });
});
