/**
 * Superscript and subscript in plain text: "km²", "10⁻⁷", "H₂O", "xᵢ". Only characters
 * Unicode has a raised or lowered form for are converted; anything else is left to the
 * caller, which writes it another way ("^(−H/5)") rather than lose it.
 */

const SUPERSCRIPT: Record<string, string> = {
  "0": "⁰",
  "1": "¹",
  "2": "²",
  "3": "³",
  "4": "⁴",
  "5": "⁵",
  "6": "⁶",
  "7": "⁷",
  "8": "⁸",
  "9": "⁹",
  "+": "⁺",
  "-": "⁻",
  "−": "⁻",
  "–": "⁻",
  "=": "⁼",
  "(": "⁽",
  ")": "⁾",
  n: "ⁿ",
  i: "ⁱ",
};

const SUBSCRIPT: Record<string, string> = {
  "0": "₀",
  "1": "₁",
  "2": "₂",
  "3": "₃",
  "4": "₄",
  "5": "₅",
  "6": "₆",
  "7": "₇",
  "8": "₈",
  "9": "₉",
  "+": "₊",
  "-": "₋",
  "−": "₋",
  "–": "₋",
  "=": "₌",
  "(": "₍",
  ")": "₎",
  a: "ₐ",
  e: "ₑ",
  h: "ₕ",
  i: "ᵢ",
  j: "ⱼ",
  k: "ₖ",
  l: "ₗ",
  m: "ₘ",
  n: "ₙ",
  o: "ₒ",
  p: "ₚ",
  r: "ᵣ",
  s: "ₛ",
  t: "ₜ",
  u: "ᵤ",
  v: "ᵥ",
  x: "ₓ",
};

function convert(s: string, table: Record<string, string>): string | null {
  const text = s.replace(/\s+/g, "");
  if (!text) return null;
  let out = "";
  for (const c of text) {
    const mapped = table[c];
    if (mapped === undefined) return null;
    out += mapped;
  }
  return out;
}

/** "-1" → "⁻¹"; null when some character has no superscript form. */
export function toSuperscript(s: string): string | null {
  return convert(s, SUPERSCRIPT);
}

/** "2n+2" → "₂ₙ₊₂"; null when some character has no subscript form. */
export function toSubscript(s: string): string | null {
  return convert(s, SUBSCRIPT);
}
