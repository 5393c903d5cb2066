/**
 * What limits count a client's address as (D83), and its wider block once the names counted are full (D82): one
 * module for the text format both make, which the dashboard's request counts (http) and the failed sign-ins' (here)
 * name addresses by.
 */
import { isIP } from "node:net";

/**
 * What limits count an address as (D83): an IPv4 address itself; an IPv6 address its /64, the
 * block one subscriber is given (RFC 6177), whose 2^64 addresses are one client's to use. A
 * normalAddress() (src/http/client-address.ts) is expected; anything else (a name, "unknown") is itself.
 */
export function addressGroup(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail] = address.split("::");
  const hextets = head ? head.split(":") : [];
  if (tail !== undefined && hextets.length < 4) {
    const rest = tail ? tail.split(":") : [];
    // "::" stands for the zeros between: enough of them that head, zeros and tail make 8 groups (an IPv4 tail is 2).
    const tailGroups = rest.reduce((n, part) => n + (part.includes(".") ? 2 : 1), 0);
    hextets.push(...Array(8 - hextets.length - tailGroups).fill("0"), ...rest);
  }
  return `${hextets
    .slice(0, 4)
    .map((h) => (Number.parseInt(h, 16) || 0).toString(16))
    .join(":")}::/64`;
}

/**
 * The block an addressGroup is counted in once the names are full: an IPv6 /48 (one site's, RFC 6177, what a tunnel
 * broker hands out free) or an IPv4 /24. Without it, whoever filled the names from one /48 (10,000 of its /64s) made
 * every other new client share one count, spent at once: 20 failed sign-ins more kept the dashboard's sign-in shut to
 * everyone else for the window.
 */
export function widerBlock(group: string): string | undefined {
  const v6 = /^([0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}):[0-9a-f]{1,4}::\/64$/.exec(group);
  if (v6) return `${v6[1]}::/48`;
  const v4 = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}$/.exec(group);
  return v4 ? `${v4[1]}.0/24` : undefined;
}

/** The prefix of an address's name among counts (ADDRESS + its addressGroup), the names addressBlockFor reads. */
export const ADDRESS = "address:";

/**
 * The name a counted address's block is counted under (a WindowCounts' `wider`): ADDRESS and the widerBlock of the
 * name's address; none for a name that is no address's (a session's, the operator's).
 */
export function addressBlockFor(name: string): string | undefined {
  const block = name.startsWith(ADDRESS) ? widerBlock(name.slice(ADDRESS.length)) : undefined;
  return block && ADDRESS + block;
}
