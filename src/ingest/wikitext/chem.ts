/**
 * Chemical formulas and equations in mhchem notation (<chem>, <ce>, \ce{…}) → plain text:
 * "2H2 + O2 -> 2H2O" → "2H₂ + O₂ → 2H₂O", "SO4^2-" → "SO₄²⁻".
 */
import { toSubscript, toSuperscript } from "./scripts";

const ARROWS: [RegExp, string][] = [
  [/<=>|<->/g, " ⇌ "],
  [/->|→/g, " → "],
  [/<-/g, " ← "],
];

export function chemToText(formula: string): string {
  let s = formula.replace(/\\ce\s*\{([^{}]*)\}/g, "$1");
  for (const [arrow, text] of ARROWS) s = s.replace(arrow, text);
  // Charges: "^2-", "^{2+}", "^-".
  s = s.replace(
    /\^\{([^{}]*)\}|\^([0-9]*[+\-−])/g,
    (m, braced: string | undefined, bare: string | undefined) => toSuperscript(braced ?? bare ?? "") ?? m,
  );
  // Counts: digits after an element, a closing bracket or a count letter ("CnH2n+2" stays as written).
  s = s.replace(/(?<=[A-Za-z)\]])\d+/g, (digits) => toSubscript(digits) ?? digits);
  return s.replace(/\s+/g, " ").trim();
}
