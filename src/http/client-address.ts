/**
 * The address a request came from (D80): the socket's, unless that is a proxy the operator
 * trusts (TOME_TRUSTED_PROXIES); then the last address its X-Forwarded-For names that is not
 * itself a trusted proxy. Read from the right, as nginx's real_ip_recursive and Express's
 * "trust proxy" read it: a client may write any X-Forwarded-For it likes, but each trusted proxy
 * appends the address it was reached from, so only the entries after the last untrusted one
 * were written by proxies.
 */
import { isIP } from "node:net";

/** An address as compared: an IPv4 address mapped into IPv6 (::ffff:10.0.0.1) as the IPv4 one, IPv6 lower-cased. */
export function normalAddress(address: string): string {
  const lower = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped ? mapped[1]! : lower;
}

export function clientAddress(socket: string, forwardedFor: string | null, trusted: ReadonlySet<string>): string {
  let address = normalAddress(socket);
  if (!trusted.has(address) || !forwardedFor) return address;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalAddress(hops[i]!);
    // A hop that is no address (a name, "unknown", garbage) cannot be told apart from another: stop at the last good one.
    if (isIP(hop) === 0) return address;
    address = hop;
    if (!trusted.has(hop)) return address;
  }
  return address;
}
