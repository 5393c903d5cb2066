/** Loaded before every test file (bunfig.toml): what the tests' processes share. */
import { afterAll } from "bun:test";
import { removeMadeDirs } from "../bench/temp-dirs";

// The temporary folders a test file made go when its tests are done (bun test emits no exit event to remove them on).
afterAll(removeMadeDirs);
