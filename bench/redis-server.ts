/**
 * A real redis-server (Debian's package; src/cli/run.sh setup installs it) started by a test or a
 * benchmark on a free port, with its own temporary directory and the persistence docs/redis.md
 * asks for (AOF, appendfsync everysec). Never the machine's own Redis service.
 */
import { spawn, spawnSync } from "bun";
import { join } from "node:path";
import { tempDir } from "./temp-dirs";

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  /** Stops it (SIGKILL) once its AOF holds what it answered: what a crash or a cut network looks like to the replicas. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (it reloads its AOF). */
  restart(): Promise<void>;
  /** Its process id (to stop it with SIGSTOP: a Redis that hangs). */
  pid(): number;
  /** Runs redis-cli against it; its output. */
  cli(...args: string[]): string;
  stop(): Promise<void>;
}

/** A port nothing listens on now. */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export interface RedisOptions {
  /** The persistence docs/redis.md asks for, AOF fsynced every second (default true); without it Redis keeps nothing on disk. */
  aof?: boolean;
  /** The command line as it is run (a benchmark pins it to a core with taskset). */
  command?: (argv: string[]) => string[];
}

export async function startRedis({ aof = true, command = (argv) => argv }: RedisOptions = {}): Promise<RedisServer> {
  const dir = tempDir("tome-redis-");
  const port = freePort();
  let proc: ReturnType<typeof spawn> | undefined;
  const cli = (...args: string[]) =>
    spawnSync(["redis-cli", "-p", String(port), ...args])
      .stdout.toString()
      .trim();
  const launch = async () => {
    proc = spawn(
      command([
        "redis-server",
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        ...(aof ? ["--appendonly", "yes", "--appendfsync", "everysec"] : []),
        "--save",
        "",
        "--logfile",
        join(dir, "redis.log"),
      ]),
      {
        stdout: "ignore",
        stderr: "ignore",
        stdin: "ignore",
      },
    );
    const deadline = Date.now() + 10_000;
    while (cli("PING") !== "PONG") {
      if (Date.now() > deadline || proc.exitCode !== null)
        throw new Error(`redis-server did not start on port ${port} (see ${dir}/redis.log)`);
      await Bun.sleep(20);
    }
  };
  await launch();
  const kill = async () => {
    // First, until Redis has written what it answered to its AOF: with appendfsync everysec it
    // holds writes back (up to 2 s) while the previous fsync still runs, and a crash then loses
    // them (docs/redis.md). These tests are about the replicas, not about Redis's own durability.
    const deadline = Date.now() + 5_000;
    while (
      proc?.exitCode === null &&
      Date.now() < deadline &&
      !/^(aof_buffer_length:0|aof_enabled:0)\r?$/m.test(cli("INFO", "persistence"))
    )
      await Bun.sleep(20);
    proc?.kill("SIGKILL");
    await proc?.exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    kill,
    pid: () => proc!.pid,
    restart: launch,
    cli,
    stop: kill,
  };
}
