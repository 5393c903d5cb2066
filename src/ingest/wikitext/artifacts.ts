/**
 * What JavaScript writes for a value that is missing, as a template handler that
 * interpolates one leaves it in the text: "undefined", "NaN", "[object Object]" (and "null").
 * A page may hold these words itself ("some undefined position", the NaN of floating point),
 * so they are artifacts only where the wikitext they came from does not hold them.
 */

/** Counted by `bun run leaks`. "undefined" glues to its neighbours ("1/undefinedn"); NaN only as a word, not in "Nancy" or "NaNO₃". */
export const ARTIFACT_PATTERNS: Readonly<Record<string, RegExp>> = {
  undefined: /undefined/g,
  NaN: /(?<![\p{L}\p{N}])NaN(?![\p{L}\p{N}])/gu,
  "[object": /\[object\b/g,
};

/** Also refused from template handlers, though too common a word to count in prose. */
const NULL = /(?<![\p{L}\p{N}])null(?![\p{L}\p{N}])/gu;

/** How often each artifact word occurs in a text; absent words are left out. */
export function countArtifacts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [word, pattern] of Object.entries(ARTIFACT_PATTERNS)) {
    const n = text.match(pattern)?.length ?? 0;
    if (n) counts.set(word, n);
  }
  return counts;
}

/** True when `output` holds an artifact word that `source` (what it was rendered from) does not. */
export function hasArtifact(output: string, source: string): boolean {
  for (const pattern of [...Object.values(ARTIFACT_PATTERNS), NULL]) {
    const inOutput = output.match(pattern)?.length ?? 0;
    if (inOutput > (source.match(pattern)?.length ?? 0)) return true;
  }
  return false;
}
