/** Loaded before every test file (bunfig.toml): what the tests' processes share. */
import { afterAll } from "bun:test";
import { removeMadeDirs } from "../bench/temp-dirs";

// The temporary folders a test file made go when its tests are done (bun test emits no exit event to remove them on).
// A file's folders can hold a clone of the repository and an executable (1.5 GB): on a busy machine their removal
// took longer than a hook's default 5 s.
afterAll(removeMadeDirs, 120_000);
