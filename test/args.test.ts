/**
 * Every command that reads options with parseArgs, given one it does not take: exit 2 and a
 * message naming the options it does take, never node:util's hint to pass `-- "--bogus"` (none
 * of these commands takes an argument starting with "-"), with the way to its --help after it.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { totalmem } from "node:os";
import { readArgs } from "../src/cli/args";
import { bytesOf, parseBuildArgs, positiveInt } from "../src/cli/snapshot-build";
import { parseUpdateArgs } from "../src/cli/snapshot-update";
import { parseFollowArgs } from "../src/cli/snapshot-follow";
import { ArgumentError, type mainOf } from "../src/cli/main";
import { EN_2016, ROOT, runToExit, snapshotFor, SQUAD, tempDir } from "./helpers";

// Each case runs a command or several (bun starting each): seconds on a loaded machine, past bun test's 5 s default.
setDefaultTimeout(60_000);

/**
 * The usage error a command's exported parse function throws for `argv` (its message, as main prints it after the
 * command's name, with exit 2: the spawns of "an option a command does not take" show that of each command).
 */
function refusedBy(parse: (argv: string[]) => unknown, argv: string[]): string {
  try {
    parse(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(ArgumentError);
    return (err as Error).message;
  }
  throw new Error(`taken: ${argv.join(" ")}`);
}

const COMMANDS: [file: string, args: string[], takes: string][] = [
  ["keys.ts", ["create"], "the options --name, --account, --plan, --scope, --expires, --json and -h/--help"],
  ["keys.ts", ["list"], "the options --json and -h/--help"],
  ["keys.ts", ["revoke"], "one argument and no option but -h/--help"],
  ["keys.ts", ["plan"], "the options --account, --plan, --rate and -h/--help"],
  ["keys.ts", ["account", "create"], "the options --account, --plan, --json and -h/--help"],
  ["keys.ts", ["import"], "no option but -h/--help"],
  [
    "snapshot-build.ts",
    [],
    "the options --dump, --out, --limit, --chunk-words, --allow-truncated, --workers, --memory",
  ],
  ["snapshot-update.ts", [], "the options --base, --dump, --deleted, --out, --memory, --workers and -h/--help"],
  ["snapshot-follow.ts", [], "the options --dir, --snapshot, --from, --url"],
  ["snapshot-export.ts", [], "the options --snapshot, --out, --since and -h/--help"],
  ["snapshot-convert.ts", [], "one argument and the options --out and -h/--help"],
  ["snapshot-verify.ts", [], "one argument and no option but -h/--help"],
  ["compile.ts", [], "the options --out and -h/--help"],
  ["leaks.ts", [], "the options --dump and -h/--help"],
];

describe("an option a command does not take", () => {
  for (const [file, args, takes] of COMMANDS) {
    test(`${file} ${args.join(" ")} --bogus says which options it takes`, async () => {
      const r = await runToExit(["bun", join(ROOT, "src/cli", file), ...args, "--bogus"], {
        TOME_DATA: tempDir("tome-args-"),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`unknown option --bogus: the command takes ${takes}`);
      expect(r.stderr).toContain("--help");
      expect(r.stderr).not.toContain("positional");
    });
  }
});

describe("an option that takes one value, given twice (D118)", () => {
  const given: [file: string, args: string[], said: string][] = [
    [
      "snapshot-build.ts",
      ["--dump", "none.xml", "--out", "a.tome", "--out", "b.tome"],
      '--out is given twice ("a.tome", then "b.tome")',
    ],
    [
      "snapshot-update.ts",
      ["--base", "a.tome", "--base", "b.tome", "--dump", "none.xml", "--out", "c.tome"],
      '--base is given twice ("a.tome", then "b.tome")',
    ],
    [
      "snapshot-export.ts",
      ["--snapshot", "a.tome", "--snapshot=b.tome"],
      '--snapshot is given twice ("a.tome", then "b.tome")',
    ],
    ["keys.ts", ["create", "--name", "first", "--name", "second"], '--name is given twice ("first", then "second")'],
  ];
  const parses: Record<string, (argv: string[]) => unknown> = {
    "snapshot-build.ts": parseBuildArgs,
    "snapshot-update.ts": parseUpdateArgs,
  };
  for (const [file, args, said] of given) {
    test(`${file} ${args.join(" ")}: refused, exit 2, where parseArgs kept the last silently`, async () => {
      // In process where the command's parse function is exported (a usage error: exit 2, as its --bogus spawn shows).
      const parse = parses[file];
      if (parse) {
        expect(refusedBy(parse, args)).toBe(`${said}: it takes one value. Give it once.`);
        return;
      }
      const dir = tempDir("tome-args-");
      const r = await runToExit(["bun", join(ROOT, "src/cli", file), ...args], { TOME_DATA: dir }, dir);
      expect(r.stderr).toContain(`${said}: it takes one value. Give it once.`);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
    });
  }

  test("its values, an unknown option and a surplus argument are said with their terminal escapes and controls written \\u…, where an ESC went to the terminal raw", () => {
    const options = { name: { type: "string" } } as const;
    const said = (argv: string[]) => {
      try {
        readArgs(argv, options);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error("taken");
    };
    expect(said(["--name", "\x1b[31mred", "--name", "b\u202eb"])).toBe(
      '--name is given twice ("\\u001b[31mred", then "b\\u202eb"): it takes one value. Give it once.',
    );
    expect(said(["--name", "a", "x\x1b]0;t\x07"])).toStartWith('unexpected argument "x\\u001b]0;t\\u0007": ');
    expect(said(["--na\x1bme"])).toStartWith("unknown option --na\\u001bme: ");
  });

  test("a count past 2^53 - 1 (--limit 99999999999999999999999) is refused with the usage, where the build threw the library's RangeError with its stack", () => {
    // A usage error (ArgumentError: the usage follows it, exit 2), not a RangeError.
    expect(
      refusedBy(parseBuildArgs, [
        "--dump",
        SQUAD,
        "--out",
        join(tempDir("tome-args-"), "x.tome"),
        "--limit",
        "99999999999999999999999",
      ]),
    ).toBe('--limit takes a whole number from 1 to 9007199254740991, not "99999999999999999999999".');
  });

  test("a value a command refuses (--workers, --memory, --since, …) is said back with its terminal escapes written \\u…, where it went to the terminal raw", async () => {
    const refused = (read: () => unknown) => {
      try {
        read();
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error("taken");
    };
    expect(refused(() => positiveInt("workers", "\x1b[31m2"))).toBe(
      '--workers takes a whole number from 1 to 9007199254740991, not "\\u001b[31m2".',
    );
    expect(refused(() => bytesOf("2G\u202e"))).toBe('--memory takes a size such as 500M or 2G, not "2G\\u202e".');
    const r = await runToExit(
      ["bun", join(ROOT, "src/cli/snapshot-export.ts"), "--snapshot", "none.tome", "--since", "\x1b]0;t\x07"],
      {},
    );
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      2,
      'snapshot:export: --since takes Unix seconds or an RFC 3339 date-time with a zone (2026-01-01T00:00:00Z), not "\\u001b]0;t\\u0007".',
    ]);
  });

  test("--help beside it shows the help, exit 0, as beside a value the command would refuse", async () => {
    const r = await runToExit(
      ["bun", join(ROOT, "src/cli/snapshot-build.ts"), "--out", "a", "--out", "b", "--help"],
      {},
    );
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain("Usage: bun run snapshot:build");
  });

  test("an option that takes several (--dump) and a switch given twice are taken", () => {
    expect(
      parseBuildArgs(["--dump", "a.xml", "--dump", "b.xml", "--allow-truncated", "--allow-truncated"]),
    ).toMatchObject({ dumps: ["a.xml", "b.xml"], allowTruncated: true });
  });
});

describe("--memory below 1M (D118)", () => {
  const parses = {
    "snapshot-build.ts": parseBuildArgs,
    "snapshot-update.ts": parseUpdateArgs,
    "snapshot-follow.ts": parseFollowArgs,
  };
  for (const file of ["snapshot-build.ts", "snapshot-update.ts", "snapshot-follow.ts"] as const) {
    test(`${file}: --memory 2, meant as 2G, is 2 bytes: refused at once, exit 2; 1M is taken`, () => {
      // In process: the command's parse function, before any work (a usage error: exit 2, as its --bogus spawn shows).
      const args = {
        "snapshot-build.ts": ["--dump", "none.xml"],
        "snapshot-update.ts": [
          "--base",
          "none.tome",
          "--dump",
          "none.xml",
          "--out",
          join(tempDir("tome-args-"), "y.tome"),
        ],
        "snapshot-follow.ts": ["--snapshot", "none.tome"],
      }[file];
      expect(refusedBy(parses[file], [...args, "--memory", "2"])).toBe(
        "--memory 2 is 2 bytes, below the least it takes (1M): give a size with its unit, such as 500M or 2G.",
      );
      expect(parses[file]([...args, "--memory", "1M"])).toMatchObject({ memoryBytes: 1_000_000 });
    });
  }
});

/**
 * A process of the command whose process.constrainedMemory() (Bun's reading of its cgroup's limit: build.test.ts
 * "the memory bound read from a container's cgroup files") says `limit`, as Bun does in a container of that size; Bun
 * says the machine's memory where there is no limit.
 */
function underLimit(file: string, args: string[], limit: number, dir: string) {
  const preload = join(dir, "limit.ts");
  writeFileSync(preload, `process.constrainedMemory = () => ${limit};`);
  return runToExit(["bun", "--preload", preload, join(ROOT, "src/cli", file), ...args], {}, dir);
}

const MEMORY_ARGS: Record<string, string[]> = {
  "snapshot-build.ts": ["--dump", "none.xml"],
  "snapshot-update.ts": ["--base", "none.tome", "--dump", "none.xml", "--out", "y.tome"],
  "snapshot-follow.ts": ["--snapshot", "none.tome"],
};

describe("--memory above the machine's memory (D161)", () => {
  // One gigabyte past it, written as a user would: accepted, the build swapped, or was killed, hours in.
  const past = `${Math.ceil(totalmem() / 1e9) + 1}G`;
  const machine = `${(totalmem() / 1e9).toFixed(1)} GB`;
  const most = `${(Math.floor(totalmem() / 1e8) / 10).toFixed(1)}G`;
  const fallback = `${(Math.min(2e9, totalmem() / 4) / 1e9).toFixed(1)}G`;
  for (const [file, args] of Object.entries(MEMORY_ARGS)) {
    test(`${file}: --memory a gigabyte past the machine's memory, or 100T, refused at once, exit 2, naming its memory and what to give`, async () => {
      const dir = tempDir("tome-args-");
      for (const size of [past, "100T"]) {
        const r = await underLimit(file, [...args, "--memory", size], totalmem(), dir);
        expect({ size, code: r.code, said: r.stderr.split("\n")[0] }).toEqual({
          size,
          code: 2,
          said: expect.stringContaining(
            `--memory ${size} is more than this machine's memory (${machine}): give at most ${most}, less to leave room for the rest of the build, or leave --memory out for the default (${fallback}).`,
          ),
        });
      }
      // The machine's memory itself is taken (the budget over-counts what the inversion holds: D118).
      const whole = await underLimit(file, [...args, "--memory", String(totalmem())], totalmem(), dir);
      expect(whole.stderr).not.toContain("--memory");
      expect(whole.code).toBe(1);
    });
  }
});

describe("--memory in a container held to less than the machine (D161)", () => {
  // A container of 1 GB on a larger machine: --memory 2G was taken (only the machine's memory bounded it), and the
  // default of 2 GB too; the kernel kills the build at the container's limit, hours in.
  const LIMIT = 1e9;
  const machine = `${(totalmem() / 1e9).toFixed(1)} GB`;
  for (const [file, args] of Object.entries(MEMORY_ARGS)) {
    test(`${file}: --memory past the container's limit refused at once, exit 2, naming the limit; the default falls to a quarter of it`, async () => {
      const dir = tempDir("tome-args-");
      const r = await underLimit(file, [...args, "--memory", "2G"], LIMIT, dir);
      expect({ code: r.code, said: r.stderr.split("\n")[0] }).toEqual({
        code: 2,
        said: expect.stringContaining(
          `--memory 2G is more than this container's memory limit (1.0 GB, its cgroup's; the machine has ${machine}): give at most 1.0G, less to leave room for the rest of the build, or leave --memory out for the default (250M).`,
        ),
      });
      const limit = await underLimit(file, [...args, "--memory", "1G"], LIMIT, dir);
      expect(limit.stderr).not.toContain("--memory");
      expect(limit.code).toBe(1);
    });
  }
  test("snapshot:build's and snapshot:update's --help say the container's limit and the default that fits it", async () => {
    const dir = tempDir("tome-args-");
    const help = async (file: string) => (await underLimit(file, ["--help"], LIMIT, dir)).stdout.replace(/\s+/g, " ");
    expect(await help("snapshot-build.ts")).toContain(
      "at most this machine's memory or its container's limit, here the container's, 1.0G; default a quarter of that, at most 2G: 250M)",
    );
    expect(await help("snapshot-update.ts")).toContain(
      "at most this machine's memory or its container's limit, here the container's, 1.0G; default 250M)",
    );
  });
});

describe("--out a device or a pipe", () => {
  test("is refused before the work by build and update (renamed over, as root /dev/null became the snapshot); a FIFO too", () => {
    const fifo = join(tempDir("tome-args-"), "out.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    for (const [out, kind] of [
      ["/dev/null", "a device"],
      [fifo, "a pipe"],
    ]) {
      const said = `--out ${out} is ${kind}, not a file: the snapshot is written beside it and renamed over it, which would replace it. Name a file.`;
      expect(() => parseBuildArgs(["--dump", SQUAD, "--out", out!])).toThrow(said);
      expect(() => parseUpdateArgs(["--base", "en.tome", "--dump", SQUAD, "--out", out!])).toThrow(said);
    }
  });
});

describe("--out starting with ~ the shell did not expand", () => {
  test("is refused before the work (--out=~/en.tome made a folder named '~' where the command ran, and wrote there)", () => {
    const said =
      '--out ~/en.tome starts with "~", which the shell did not turn into a home folder (it does not after "="): write --out ~/en.tome with a space, or the full path, or ./~/en.tome for a file or folder really named so.';
    // Where the test runs and in a folder holding a "~" (the bug left such folders in Tome's, and one was taken as
    // meant, so the refusal depended on the checkout): refused in both.
    const withTilde = tempDir("tome-args-");
    mkdirSync(join(withTilde, "~"));
    for (const cwd of [process.cwd(), withTilde]) {
      const was = process.cwd();
      process.chdir(cwd);
      try {
        expect(() => parseBuildArgs(["--out=~/en.tome", "--dump", SQUAD])).toThrow(said);
        expect(() => parseUpdateArgs(["--base", "en.tome", "--dump", SQUAD, "--out=~/en.tome"])).toThrow(said);
        expect(() => parseBuildArgs(["--out=~", "--dump", SQUAD])).toThrow('--out ~ starts with "~"');
      } finally {
        process.chdir(was);
      }
    }
  });

  test("a file named ~x.tome (no folder part: no folder named ~ is made), or ./~/en.tome, is taken", () => {
    const dir = tempDir("tome-args-");
    const was = process.cwd();
    process.chdir(dir);
    try {
      // Was refused: "write --out ~x.tome with a space", which bash leaves as it is when there is no user x.tome.
      expect(parseBuildArgs(["--out=~x.tome", "--dump", SQUAD])).toMatchObject({ out: "~x.tome" });
      expect(parseBuildArgs(["--out", "./~/en.tome", "--dump", SQUAD])).toMatchObject({ out: "./~/en.tome" });
    } finally {
      process.chdir(was);
    }
  });
});

describe("an option given an empty value (D118)", () => {
  test("is refused naming it, where --dump '' was 'dump not found: .' and follow's --from '' went to Wikimedia", () => {
    const said = "--dump is empty: give it a value, or leave it out.";
    expect(() => parseBuildArgs(["--dump", ""])).toThrow(said);
    expect(() => parseUpdateArgs(["--base", "en.tome", "--dump", SQUAD, "--dump", "", "--out", "x.tome"])).toThrow(
      said,
    );
    // A usage error (ArgumentError): exit 2.
    expect(() => parseFollowArgs(["--from", ""])).toThrow(ArgumentError);
    expect(() => parseFollowArgs(["--from", ""])).toThrow(said.replace("--dump", "--from"));
  });

  test("is refused by every command, not the snapshot ones alone: leaks --dump '' checked a dump named ''", async () => {
    const r = await runToExit(["bun", join(ROOT, "src/cli/leaks.ts"), "--dump", ""], {}, tempDir("tome-args-"));
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([2, "leaks: --dump is empty: give it a value, or leave it out."]);
  });
});

describe("--out a file that is not a snapshot", () => {
  test("is refused before the work by build and update (it was replaced by the snapshot); a snapshot there, or an empty file, is written over", async () => {
    const dir = tempDir("tome-args-");
    const notes = join(dir, "notes.md");
    writeFileSync(notes, "# my notes\n");
    const said = `--out ${notes} is a file that is not a snapshot: writing the snapshot would replace it. Name another file, or remove that one first.`;
    expect(() => parseBuildArgs(["--dump", SQUAD, "--out", notes])).toThrow(said);
    expect(() => parseUpdateArgs(["--base", "en.tome", "--dump", SQUAD, "--out", notes])).toThrow(said);
    const empty = join(dir, "empty.tome");
    writeFileSync(empty, "");
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    for (const out of [empty, snapshot]) expect(parseBuildArgs(["--dump", SQUAD, "--out", out])).toMatchObject({ out });
  });
});

describe("bun run compile --out", () => {
  test("a folder is refused at once, exit 2, in one line: not bun build's uncaught error after its bundling", async () => {
    const dir = tempDir("tome-args-");
    const r = await runToExit(["bun", join(ROOT, "src/cli/compile.ts"), "--out", dir], {});
    expect(r.stderr).toContain(
      `compile: --out names a folder (${dir}): name the executable file, e.g. --out ${join(dir, "tome")}.`,
    );
    expect(r.stderr).not.toContain("Bun v");
    expect(r.code).toBe(2);
  });

  test("a folder that takes no new file (/proc) is said in one line, exit 1: not bun build's uncaught AggregateError (D184)", async () => {
    const r = await runToExit(
      ["bun", join(ROOT, "src/cli/compile.ts"), "--out", "/proc/tome"],
      {},
      tempDir("tome-args-"),
    );
    expect(r.stderr.trim()).toMatch(/^compile: could not write \/proc\/tome: failed to rename \S+ to tome: ENOENT$/);
    expect(r.code).toBe(1);
  });
});

describe("tome and keys with an object's member as their command", () => {
  test("__proto__, constructor and toString are unknown commands of tome and keys, exit 2, where they threw a TypeError with its stack or did nothing with exit 0 (D89)", async () => {
    for (const [file, tool] of [
      ["tome.ts", "tome"],
      ["keys.ts", "keys"],
    ])
      for (const name of ["__proto__", "constructor", "toString"]) {
        const r = await runToExit(["bun", join(ROOT, "src/cli", file!), name], { TOME_DATA: tempDir("tome-args-") });
        expect({ name, code: r.code, first: r.stderr.split("\n")[0] }).toEqual({
          name,
          code: 2,
          first: `${tool}: unknown command "${name}".`,
        });
      }
  });
});

describe("tome (the executable's commands) without a command", () => {
  test("its usage is a usage error's, on stderr with exit 2, where it went to stdout; --help is on stdout, exit 0", async () => {
    const none = await runToExit(["bun", join(ROOT, "src/cli/tome.ts")], {});
    expect([none.code, none.stdout]).toEqual([2, ""]);
    expect(none.stderr).toContain("Usage: tome <command> [its options]");
    const help = await runToExit(["bun", join(ROOT, "src/cli/tome.ts"), "--help"], {});
    expect([help.code, help.stderr]).toEqual([0, ""]);
    expect(help.stdout).toContain("Usage: tome <command> [its options]");
  });
});

describe("tome <command>: the settings read by the command alone, as bun run <command> reads them", () => {
  test("a setting refused is named by the command, where tome read them first and refused its --help too", async () => {
    const env = { TOME_ZSTD: "lz4", TOME_DATA: tempDir("tome-args-") };
    const tome = (...args: string[]) => runToExit(["bun", join(ROOT, "src/cli/tome.ts"), ...args], env);
    const refused = await tome("snapshot:verify", "x.tome");
    expect([refused.code, refused.stderr]).toEqual([
      2,
      'snapshot:verify: TOME_ZSTD must be "system" or "node" (the default is "system"), not "lz4".\n',
    ]);
    const help = await tome("start", "--help");
    expect([help.code, help.stderr]).toEqual([0, ""]);
    expect(help.stdout).toContain("Usage: ");
    expect(help.stdout).toContain("Environment:");
  });

  test("--help of each command that reads options is answered whatever the settings say, as start's is (TOME_ZSTD=lz4 exited 2 for snapshot:build --help)", async () => {
    const env = { TOME_ZSTD: "lz4", TOME_DATA: tempDir("tome-args-") };
    const commands = [
      ["snapshot-build.ts"],
      ["snapshot-update.ts"],
      ["snapshot-follow.ts"],
      ["snapshot-export.ts"],
      ["leaks.ts"],
      ["compile.ts"],
      ["keys.ts", "list"],
    ];
    for (const [file, ...args] of commands) {
      const help = await runToExit(["bun", join(ROOT, "src/cli", file!), ...args, "--help"], env);
      expect({ file, code: help.code, stderr: help.stderr }).toEqual({ file, code: 0, stderr: "" });
      expect(help.stdout).toContain("Usage: ");
    }
    // Past --help, the settings are still read before the work: refused, exit 2.
    const build = await runToExit(["bun", join(ROOT, "src/cli/snapshot-build.ts"), "--dump", EN_2016], env);
    expect([build.code, build.stderr]).toEqual([
      2,
      'snapshot:build: TOME_ZSTD must be "system" or "node" (the default is "system"), not "lz4".\n',
    ]);
  });

  test("mainOf takes no option it would ignore (lowered, usesLayers: mainAfterOptions' alone)", () => {
    // @ts-expect-error: mainOf reads no options, so it neither lowers the process nor skips the layers (typecheck).
    const ignored: NonNullable<Parameters<typeof mainOf>[2]> = { lowered: true };
    expect(Object.keys(ignored)).toEqual(["lowered"]);
  });
});

describe("bun run snapshot:follow's arguments", () => {
  const FOLLOW = join(ROOT, "src/cli/snapshot-follow.ts");

  test("--start-day that is no day of the calendar (month 13, February 30) is refused, where it was 'up to date: no dump from 20261301 on'", async () => {
    // One process, to show the refusal exits 2; the other days in process (parseFollowArgs: the same usage error).
    const r = await runToExit(["bun", FOLLOW, "--start-day", "20261301"], {}, tempDir("tome-args-"));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--start-day takes a day as YYYYMMDD, not "20261301".');
    for (const day of ["20261301", "20260230", "20250229"])
      expect(refusedBy(parseFollowArgs, ["--start-day", day])).toBe(
        `--start-day takes a day as YYYYMMDD, not "${day}".`,
      );
    expect(parseFollowArgs(["--start-day", "20240229"])).toMatchObject({ startDay: "20240229" });
  });

  test("--every below a minute (1e-9, which looked again with no pause), 0, Infinity or no number is refused, naming the least (D168)", async () => {
    // One process, to show the refusal exits 2; every value in process (parseFollowArgs: the same usage error).
    const r = await runToExit(["bun", FOLLOW, "--every", "1e-9"], {}, tempDir("tome-args-"));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--every takes a number of hours from 0.0167 (a minute) up, e.g. 6, not "1e-9"');
    for (const every of ["1e-9", "0.01", "0", "Infinity", "six"])
      expect(refusedBy(parseFollowArgs, ["--every", every])).toStartWith(
        `--every takes a number of hours from 0.0167 (a minute) up, e.g. 6, not "${every}"`,
      );
    // A minute is taken.
    expect(parseFollowArgs(["--every", "0.0167"])).toMatchObject({ everyHours: 0.0167 });
  });

  test("--every is decimal hours: 0x10 (read as 16 hours), 0b11, 1e3 and ' 6' are refused (D168)", () => {
    // In-process: taken, 0x10 went on to follow the snapshots (the network) where it should have failed at once.
    for (const every of ["0x10", "0b11", "1e3", " 6"]) {
      // A usage error (ArgumentError): exit 2.
      expect(() => parseFollowArgs(["--every", every])).toThrow(ArgumentError);
      expect(() => parseFollowArgs(["--every", every])).toThrow(
        `--every takes a number of hours from 0.0167 (a minute) up, e.g. 6, not "${every}"`,
      );
    }
  });

  test("--wiki naming another wiki than the snapshot's is refused, where it said 'up to date: no frwiki incremental dump'", async () => {
    const dir = tempDir("tome-args-");
    const snapshot = await snapshotFor({ dumps: [SQUAD], limit: 10 });
    const r = await runToExit(
      ["bun", FOLLOW, "--snapshot", snapshot, "--dir", dir, "--from", dir, "--wiki", "frwiki"],
      {},
      dir,
    );
    expect([r.code, r.stderr.trim()]).toEqual([
      2,
      `snapshot:follow: ${snapshot} is a snapshot of enwiki (en.wikipedia.org), not frwiki: only its own wiki's dumps apply to it. Leave --wiki out, or give --snapshot a snapshot of frwiki.\nRun \`bun run snapshot:follow --help\` for usage.`,
    ]);
  });

  test("--snapshot given and no snapshots/ folder: says where the update would go and how to move it, not to build a snapshot there", async () => {
    const dir = tempDir("tome-args-");
    const r = await runToExit(["bun", FOLLOW, "--snapshot", join(dir, "en.tome")], {}, dir);
    expect([r.code, r.stderr.trim()]).toEqual([
      1,
      `snapshot:follow: no folder snapshots/ to write the updated snapshot in: create it, or pass --dir (e.g. --dir ${dir}, beside --snapshot).`,
    ]);
  });
});

describe("a file whose name starts with '-'", () => {
  for (const file of ["snapshot-verify.ts", "snapshot-convert.ts"]) {
    test(`${file} -old.tome: the option is named with its dash ('o' was), and the way to give the file (./-old.tome)`, async () => {
      const r = await runToExit(["bun", join(ROOT, "src/cli", file), "-old.tome"], {}, tempDir("tome-args-"));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("unknown option -o: the command takes one argument");
      expect(r.stderr).toContain('(a file whose name starts with "-" is given as ./-old.tome)');
    });
  }
});

describe("a relative path not there, typed in a folder of the checkout", () => {
  const runsIn = (folder: string) =>
    `A relative path is read from ${folder}: a package script (\`bun run\`, \`npm start\`) runs its command in the folder of its package, whichever folder it is typed in. Give the path from there, or an absolute one.`;
  const readFrom = runsIn(ROOT);
  test("bun run, which runs the command in its package's folder, says where the path was read from", async () => {
    const docs = join(ROOT, "docs");
    const verify = await runToExit(["bun", "run", "snapshot:verify", "../snapshots/none.tome"], {}, docs);
    expect(verify.stderr).toContain(`snapshot not found: ../snapshots/none.tome. Build one with`);
    expect(verify.stderr).toContain(readFrom);
    const build = await runToExit(["bun", "run", "snapshot:build", "--dump", "none.xml.bz2"], {}, docs);
    expect(build.stderr).toContain(
      `dump not found: none.xml.bz2. Give an existing file or an http(s) URL. ${readFrom}`,
    );
    // npm start's run.sh runs the server in its package's folder too; here another package's, which runs Tome (a
    // folder with no snapshot: it would build one). It was said to be Tome's folder.
    const dir = tempDir("tome-args-");
    const env = { npm_lifecycle_event: "start", TOME_DUMP: "none.xml.bz2", TOME_DATA: join(dir, "data") };
    const start = await runToExit(["bun", join(ROOT, "src/cli/start.ts")], env, dir);
    expect(start.stderr).toContain(
      `TOME_DUMP is none.xml.bz2, which does not exist. Set TOME_DUMP to simple or en (the latest Simple English or English Wikipedia), a dump file (plain, .bz2, .gz or .xz) or an http(s) URL, or TOME_SNAPSHOT to a snapshot to serve. ${runsIn(dir)}`,
    );
  });

  test("run as a file, the command reads it from the folder it was typed in, and says nothing more", async () => {
    // Not as npm test's child, which a package script started.
    const alone = { npm_lifecycle_event: undefined };
    const r = await runToExit(
      ["bun", join(ROOT, "src/cli/snapshot-verify.ts"), "none.tome"],
      alone,
      join(ROOT, "docs"),
    );
    expect(r.stderr).toBe(
      "snapshot:verify: snapshot not found: none.tome. Build one with `bun run snapshot:build --dump <path|url>`.\n",
    );
  });
});

describe("an option followed by what reads as an option", () => {
  const BUILD = join(ROOT, "src/cli/snapshot-build.ts");
  for (const [args, said] of [
    [
      ["--workers", "-1"],
      'snapshot:build: --workers is followed by "-1", which reads as an option: if it is --workers\'s value, write --workers=-1.',
    ],
    [
      ["--out", "-x ü.tome"],
      'snapshot:build: --out is followed by "-x ü.tome", which reads as an option: if it is --out\'s value, write "--out=-x ü.tome".',
    ],
    [["--out", "--limit", "5"], "snapshot:build: --out takes a value, and is followed by --limit."],
  ] as const) {
    test(`${args.join(" ")}: one line naming the value, where parseArgs gave three showing '--workers=-XYZ'`, async () => {
      // One line: the message (main puts the command's name before it, and the usage on the next line).
      const message = refusedBy(parseBuildArgs, ["--dump", "none.xml", ...args]);
      expect(`snapshot:build: ${message}`).toBe(said);
      expect(message).not.toContain("\n");
      if (args[0] !== "--workers") return;
      // One process, to show it is the first line of stderr, exit 2.
      const r = await runToExit(["bun", BUILD, "--dump", "none.xml", ...args], {}, tempDir("tome-args-"));
      expect(r.code).toBe(2);
      expect(r.stderr.split("\n")[0]).toBe(said);
    });
  }
});

describe("a path with terminal escapes and a line break in its name", () => {
  // ESC [ 31 m turns the terminal red, ESC ] 0 ; … BEL retitles it; the line break made the message two lines.
  const odd = "a\x1b[31mred\nline \x1b]0;t\x07.tome";
  const shown = "a\\u001b[31mred\\u000aline \\u001b]0;t\\u0007.tome";
  const cli = (file: string) => join(ROOT, "src/cli", file);
  const show = (path: string) => path.replace(odd, shown);
  test("each message naming it writes the escapes and controls as \\u…, where they went to the terminal raw", async () => {
    const dir = tempDir("tome-args-");
    const junk = join(dir, `junk-${odd}`);
    writeFileSync(junk, "not a snapshot, not XML");
    const folder = join(dir, `folder-${odd}`);
    mkdirSync(folder);
    const none = join(dir, `none-${odd}`);
    const fifo = join(dir, `fifo-${odd}`);
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const snapshotAsDump = join(dir, `snap-${odd}`);
    writeFileSync(snapshotAsDump, "TOMESNAP, not a dump");
    const url = `http://127.0.0.1:1/${odd}`;
    for (const [argv, env, code, said] of [
      [[cli("snapshot-verify.ts"), none], {}, 1, `snapshot:verify: snapshot not found: ${show(none)}.`],
      [[cli("snapshot-verify.ts"), folder], {}, 1, `snapshot:verify: ${show(folder)} is a folder, not a snapshot file`],
      [[cli("snapshot-verify.ts"), junk], {}, 1, `snapshot:verify: ${show(junk)} is not a Tome snapshot`],
      [[cli("snapshot-convert.ts"), none], {}, 1, `snapshot:convert: no file ${show(none)}: name`],
      [[cli("snapshot-convert.ts"), junk], {}, 1, `snapshot:convert: ${show(junk)} is not a format-1 Tome snapshot.`],
      [[cli("snapshot-export.ts"), "--snapshot", none], {}, 1, `snapshot:export: snapshot not found: ${show(none)}.`],
      [
        [cli("snapshot-build.ts"), "--dump", none, "--out", join(dir, "o.tome")],
        {},
        1,
        `snapshot:build: dump not found: ${show(none)}.`,
      ],
      [
        [cli("snapshot-build.ts"), "--dump", folder, "--out", join(dir, "o.tome")],
        {},
        1,
        `snapshot:build: ${show(folder)} is a folder, not a dump`,
      ],
      [
        [cli("snapshot-build.ts"), "--dump", junk, "--out", join(dir, "o.tome")],
        {},
        1,
        `snapshot:build: ${show(junk)} is not a MediaWiki XML export`,
      ],
      [
        [cli("snapshot-build.ts"), "--dump", SQUAD, "--out", folder],
        {},
        2,
        `snapshot:build: --out names a folder (${show(folder)})`,
      ],
      [
        [cli("snapshot-build.ts"), "--dump", SQUAD, "--out", junk],
        {},
        2,
        `snapshot:build: --out ${show(junk)} is a file that is not a snapshot: writing the snapshot would replace it.`,
      ],
      [
        [cli("snapshot-build.ts"), "--dump", SQUAD, "--out", fifo],
        {},
        2,
        `snapshot:build: --out ${show(fifo)} is a pipe, not a file:`,
      ],
      [[cli("snapshot-verify.ts"), fifo], {}, 1, `snapshot:verify: ${show(fifo)} is not a file (a FIFO or a device?)`],
      [
        [cli("snapshot-build.ts"), "--dump", snapshotAsDump, "--out", join(dir, "o.tome")],
        {},
        1,
        `snapshot:build: ${show(snapshotAsDump)} is a Tome snapshot, not a dump: give the MediaWiki dump it is to be built from, or apply dumps to it with snapshot:update --base ${show(snapshotAsDump)}.`,
      ],
      [
        [cli("snapshot-build.ts"), "--dump", url, "--out", join(dir, "o.tome")],
        {},
        1,
        `snapshot:build: cannot reach ${show(url)}: `,
      ],
      [
        [cli("keys.ts"), "list"],
        { TOME_DATA: junk },
        1,
        `keys list: ENOTDIR: not a directory, stat '${show(junk)}/keys.json'`,
      ],
      [[cli("mcp.ts")], { TOME_SNAPSHOT: none }, 1, `mcp: snapshot not found: ${show(none)}.`],
      // The URL start downloads from (fetch drops a line break, so it is downloaded all the same) was named raw.
      [
        [cli("start.ts")],
        { TOME_DUMP: url, TOME_DATA: join(dir, "data"), PORT: "0" },
        1,
        `No snapshot in snapshots/: downloading ${show(url)} into dumps/`,
      ],
    ] as const) {
      if (argv[0] === cli("snapshot-build.ts") && code === 2) {
        // A usage error of build's --out (checkOut, in parseBuildArgs): in process, the message main prints after the
        // command's name with exit 2 (as the --bogus spawn shows); build's other messages here are its process's.
        const message = `snapshot:build: ${refusedBy(parseBuildArgs, argv.slice(1))}`;
        expect({ argv, said: message.split("\n")[0]!.slice(0, said.length) }).toEqual({ argv, said });
        expect(message).not.toMatch(/[\x07\x1b]/);
        continue;
      }
      const r = await runToExit(["bun", ...argv], env, dir);
      expect({ argv, code: r.code, said: r.stderr.split("\n")[0]!.slice(0, said.length) }).toEqual({
        argv,
        code,
        said,
      });
      expect(r.stderr).not.toMatch(/[\x07\x1b]/);
      expect(r.stderr).not.toContain("    at ");
    }
  });

  test("the reports and notes naming it, and a setting's or an argument's value said back, write them as \\u… too", async () => {
    const dir = tempDir("tome-args-");
    const dump = join(dir, `dump-${odd}.xml.bz2`);
    writeFileSync(dump, readFileSync(EN_2016));
    const out = join(dir, `out-${odd}`);
    const exported = join(dir, `export-${odd}.jsonl`);
    const lines = async (argv: string[], env: Record<string, string> = {}) => {
      const r = await runToExit(["bun", ...argv], env, dir);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/[\x07\x1b]/);
      return { code: r.code, lines: `${r.stdout}${r.stderr}`.split("\n") };
    };
    const built = await lines([cli("snapshot-build.ts"), "--dump", dump, "--out", out, "--limit", "3"]);
    expect(built.code).toBe(0);
    expect(built.lines.find((l) => l.includes(": schema 0.10"))).toStartWith(`${show(dump)}: schema 0.10, 3 articles`);
    expect(built.lines.find((l) => l.startsWith("wrote "))).toStartWith(`wrote ${show(out)}: 3 pages`);
    expect((await lines([cli("snapshot-verify.ts"), out])).lines[0]).toStartWith(`${show(out)}: whole (`);
    const exportSaid = await lines([cli("snapshot-export.ts"), "--snapshot", out, "--out", exported]);
    expect(exportSaid.lines[0]).toStartWith(`snapshot:export: `);
    expect(exportSaid.lines[0]).toContain(` chunks of ${show(out)} → ${show(exported)} in `);
    const none = join(dir, `none-${odd}`);
    expect((await lines([cli("keys.ts"), "list"], { TOME_DATA: none })).lines[0]).toStartWith(
      `No keys in ${show(none)}/keys.json.`,
    );
    expect(
      (await lines([cli("start.ts")], { TOME_DUMP: none, TOME_DATA: join(dir, "data"), PORT: "0" })).lines,
    ).toContain(
      `start: TOME_DUMP is ${show(none)}, which does not exist. Set TOME_DUMP to simple or en (the latest Simple English or English Wikipedia), a dump file (plain, .bz2, .gz or .xz) or an http(s) URL, or TOME_SNAPSHOT to a snapshot to serve.`,
    );
    expect((await lines([cli("mcp.ts"), odd])).lines[0]).toStartWith(`mcp: it takes no arguments, not "${shown}":`);
    const oddCwd = join(dir, `cwd-${odd}`);
    mkdirSync(oddCwd);
    const looked = await runToExit(["bun", cli("mcp.ts")], { TOME_SNAPSHOT: "" }, oddCwd);
    expect(looked.stderr.split("\n")[0]).toStartWith(`mcp: no snapshot in snapshots/ (looked from ${show(oddCwd)}).`);
    expect((await lines([cli("start.ts")], { TOME_SEARCH_WORKERS: odd })).lines[0]).toEndWith(`not "${shown}".`);
  });

  test("a build's lock held, snapshot:export's --out of another compression or in no folder, snapshot:follow's --dir or --from missing: named with \\u… too", async () => {
    const dir = tempDir("tome-args-");
    const held = join(dir, `held-${odd}`);
    // This test's process stands for a build writing it.
    writeFileSync(join(dir, `.held-${odd}.lock`), `${process.pid}\n`);
    const none = join(dir, `none-${odd}`);
    for (const [argv, code, said] of [
      [
        [cli("snapshot-build.ts"), "--dump", SQUAD, "--out", held],
        1,
        `snapshot:build: another build or update (process ${process.pid}) is writing ${show(held)}: wait for it, or write this one elsewhere with --out. If none is running, delete ${join(dir, `.held-${shown}.lock`)}.`,
      ],
      [
        [cli("snapshot-export.ts"), "--snapshot", await snapshotFor({ dumps: [SQUAD] }), "--out", `${none}.bz2`],
        2,
        `snapshot:export: --out ${show(none)}.bz2: snapshot:export compresses to .gz or .zst only, and a name ending in .bz2 would hold plain JSON Lines. Name it ${show(none)}.gz, .zst, or without the ending.`,
      ],
      // Named the folder raw: its ESC acted on, its line break a line of its own.
      [
        [
          cli("snapshot-export.ts"),
          "--snapshot",
          await snapshotFor({ dumps: [SQUAD] }),
          "--out",
          join(none, `${odd}.jsonl`),
        ],
        2,
        `snapshot:export: no folder ${show(none)}/ to write ${shown}.jsonl in.`,
      ],
      [
        [cli("snapshot-follow.ts"), "--snapshot", await snapshotFor({ dumps: [SQUAD] }), "--dir", dir, "--from", none],
        1,
        `snapshot:follow: no such directory: ${show(none)}. Give the folder holding the incremental dumps.`,
      ],
      [
        [cli("snapshot-follow.ts"), "--dir", none],
        1,
        `snapshot:follow: no folder ${show(none)}/. Build a snapshot there first with \`bun run snapshot:build --dump <dump>\`, or pass --dir.`,
      ],
    ] as const) {
      const r = await runToExit(["bun", ...argv], {}, dir);
      expect({ argv, code: r.code, said: r.stderr.split("\n")[0] }).toEqual({ argv, code, said });
    }
  });

  test("a command or key id no command knows, said back (tome, keys, keys revoke): with \\u… too", async () => {
    const dir = tempDir("tome-args-");
    for (const [argv, code, said] of [
      [[cli("tome.ts"), odd], 2, `tome: unknown command "${shown}".`],
      [[cli("keys.ts"), odd], 2, `keys: unknown command "${shown}".`],
      [
        [cli("keys.ts"), "revoke", odd],
        1,
        `keys revoke: there is no key ${shown}. See the ids with: bun run keys list`,
      ],
    ] as const) {
      const r = await runToExit(["bun", ...argv], { TOME_DATA: dir }, dir);
      expect({ argv, code: r.code, said: r.stderr.split("\n")[0] }).toEqual({ argv, code, said });
      expect(r.stderr).not.toMatch(/[\x07\x1b]/);
    }
  });

  test("a data folder (TOME_DATA) so named: its key store refused, its server lock held, with \\u… too", async () => {
    const dir = tempDir("tome-args-");
    const data = join(dir, `data-${odd}`);
    mkdirSync(data);
    writeFileSync(join(data, "keys.json"), "{");
    const keys = await runToExit(["bun", cli("keys.ts"), "list"], { TOME_DATA: data }, dir);
    expect([keys.code, keys.stderr.split("\n")[0]]).toEqual([
      1,
      `keys list: ${show(data)}/keys.json is not valid JSON (JSON Parse error: Expected '}'). Restore it from a backup; nothing was changed.`,
    ]);
    rmSync(join(data, "keys.json"));
    // This test's process stands for a server on the folder.
    writeFileSync(join(data, "server.lock"), `${process.pid}\n`);
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const start = await runToExit(
      ["bun", cli("start.ts")],
      { TOME_DATA: data, TOME_SNAPSHOT: snapshot, PORT: "0" },
      dir,
    );
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(
      `start: another Tome server (process ${process.pid}) uses the data folder ${show(data)}/: two servers on one folder`,
    );
    expect(start.stderr).toContain(`If no server is running, delete ${show(data)}/server.lock.`);
    expect(start.stderr).not.toMatch(/[\x07\x1b]/);
  });
});
