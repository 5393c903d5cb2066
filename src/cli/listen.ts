/**
 * Where `bun run start` listens: HOST and PORT read and checked, a port another process holds
 * refused before serving, listen errors said plainly, and the URL to use for what was bound.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { UserError } from "../errors";
import { printableName } from "../printable";

export const DEFAULT_PORT = 8080;

/** A refusal to start, with its exit code: 2 for a bad HOST or PORT, 1 for a port in use. */
export class ListenError extends UserError {
  constructor(message: string, exitCode: 1 | 2) {
    super(message, { exitCode });
  }
}

/** A port another process listens on. */
export class PortInUse extends ListenError {}

export interface Address {
  /** What Bun.serve is given: an IP address, or undefined for its default (every interface, IPv4 and IPv6). */
  hostname: string | undefined;
  port: number;
}

export function readPort(raw: string | undefined): number {
  if (raw === undefined || raw === "") return DEFAULT_PORT;
  const port = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(port <= 65535))
    throw new ListenError(
      `PORT must be a number from 0 to 65535 (0 picks a free port), not "${printableName(raw)}".`,
      2,
    );
  return port;
}

/** HOST as an IP address (a name is resolved here, so that the banner can say which address was bound). */
export async function readHost(raw: string | undefined): Promise<string | undefined> {
  if (raw === undefined || raw === "") return undefined;
  const host = raw.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) return host;
  // An address with its port (127.0.0.1:8080, [::1]:8080, localhost:8080): the port is PORT's.
  const withPort = /^(\[[^\]]+\]|[^:]+):([0-9]+)$/.exec(raw);
  if (withPort)
    throw new ListenError(
      `HOST "${printableName(raw)}" holds a port: HOST is the address alone, the port is PORT (HOST=${withPort[1]} PORT=${withPort[2]}).`,
      2,
    );
  try {
    return (await lookup(host)).address;
  } catch {
    throw new ListenError(
      `HOST "${printableName(raw)}" is neither an IP address nor a name that resolves: use e.g. 127.0.0.1 (this machine only) or leave HOST unset (every interface).`,
      2,
    );
  }
}

export async function readAddress(settings: { host: string | undefined; port: string | undefined }): Promise<Address> {
  return { hostname: await readHost(settings.host), port: readPort(settings.port) };
}

function where(hostname: string | undefined): string {
  return hostname === undefined ? "" : ` on ${inUrl(hostname)}`;
}

/** An IPv6 address in brackets, as a URL or a "host:port" writes it (RFC 3986). */
function inUrl(hostname: string): string {
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** A listen error (Bun.serve's) as a ListenError saying what to do, or the error itself when it is another kind. */
export function listenFailure(err: unknown, { hostname, port }: Address): unknown {
  const code = (err as { code?: string } | null)?.code;
  if (code === "EADDRINUSE") {
    return new PortInUse(
      `port ${port} is already in use${where(hostname)}: another Tome, or another program, listens there ` +
        `(see which with: ss -ltnp 'sport = :${port}'). Stop it, or start on another port: PORT=${port === 65535 ? 8081 : port + 1} ` +
        `(PORT=0 picks a free one).`,
      1,
    );
  }
  if (code === "EADDRNOTAVAIL")
    return new ListenError(
      `HOST "${printableName(hostname ?? "")}" is not an address of this machine: use one of its addresses, 127.0.0.1, or leave HOST unset (every interface).`,
      2,
    );
  if (code === "EACCES")
    return new ListenError(
      `no permission to listen on port ${port}${where(hostname)} (ports below 1024 need root): use e.g. PORT=${DEFAULT_PORT}.`,
      1,
    );
  return err;
}

/**
 * Refuses a port that another process listens on. The server binds with SO_REUSEPORT (Bun's
 * default when development mode is off), and a second such bind on Linux succeeds and splits the
 * connections between the two processes; a bind without it fails instead, so this probe
 * finds the other process, whether or not it set SO_REUSEPORT itself.
 */
export function ensurePortFree(address: Address): void {
  if (address.port === 0) return;
  try {
    const probe = Bun.serve({
      ...address,
      reusePort: false,
      development: false,
      fetch: () => new Response(null, { status: 503 }),
    });
    probe.stop(true);
  } catch (err) {
    throw listenFailure(err, address);
  }
}

/** The URL to use for a server bound to hostname (as given to Bun.serve) and port, and where it listens, in words. */
export function describeListening(hostname: string | undefined, port: number): { url: string; where: string } {
  if (hostname === undefined || hostname === "::") {
    return {
      url: `http://localhost:${port}`,
      where: `listening on every interface (IPv4 and IPv6), port ${port}: from another machine use this machine's address, or set HOST=127.0.0.1 to keep it to this one`,
    };
  }
  if (hostname === "0.0.0.0") {
    return {
      url: `http://127.0.0.1:${port}`,
      where: `listening on every IPv4 interface, port ${port}: from another machine use this machine's address`,
    };
  }
  return { url: `http://${inUrl(hostname)}:${port}`, where: `listening on ${hostname} only, port ${port}` };
}
