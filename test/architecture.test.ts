/**
 * docs/architecture.md lists the request pipeline's steps as src/http/app.ts runs them: the
 * list between its `<!-- steps -->` markers names the same steps, in the same order, as the
 * `steps` array of createApp.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

test("docs/architecture.md lists the pipeline's steps in app.ts's order", () => {
  const app = readFileSync(resolve(ROOT, "src/http/app.ts"), "utf8");
  const array = /const steps: Step\[\] = \[([\s\S]*?)\n {2}\];/.exec(app)?.[1];
  expect(array).toBeDefined();
  // Each entry is a step's name, called or not, optionally inside `...(cond ? [step(…)] : [])`;
  // a call's options spread over lines (`name: value,`) are not steps.
  const inApp = array!
    .split("\n")
    .map((line) => /^\s*(?:\.\.\.\([\w.]+ \? \[)?(\w+)\b(?!:)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);

  const doc = readFileSync(resolve(ROOT, "docs/architecture.md"), "utf8");
  const list = /<!-- steps[^>]*-->([\s\S]*?)<!-- \/steps -->/.exec(doc)?.[1];
  expect(list).toBeDefined();
  const inDoc = [...list!.matchAll(/^\d+\. `(\w+)`/gm)].map((m) => m[1]);

  expect(inApp.length).toBeGreaterThan(5);
  expect(inDoc).toEqual(inApp);
});
