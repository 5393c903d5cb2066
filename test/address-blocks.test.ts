/**
 * What limits count a client's address as (src/access/address-blocks.ts, D83): an IPv4 address
 * itself, an IPv6 address its /64; and the block it is counted in once the names are full (D82).
 */
import { describe, expect, test } from "bun:test";
import { ADDRESS, addressBlockFor, addressGroup, widerBlock } from "../src/access/address-blocks";

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

  test("a counted address's name has its block's name; a name that is no address's has none", () => {
    expect(addressBlockFor(`${ADDRESS}${addressGroup("2001:db8:1:2::1")}`)).toBe(`${ADDRESS}2001:db8:1::/48`);
    expect(addressBlockFor(`${ADDRESS}203.0.113.9`)).toBe(`${ADDRESS}203.0.113.0/24`);
    expect(addressBlockFor(`${ADDRESS}unknown`)).toBeUndefined();
    expect(addressBlockFor("session 203.0.113.9")).toBeUndefined();
    expect(addressBlockFor("operator")).toBeUndefined();
  });
});
