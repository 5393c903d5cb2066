/**
 * Where a line of the PDF may break: at spaces; inside text written without spaces (Japanese,
 * Chinese, Thai, Lao, Khmer, Burmese) between the words Intl.Segmenter finds; and, in either, never against the
 * line-breaking rules of Chinese and Japanese (kinsoku shori, after JIS X 4051): no line starts
 * with closing punctuation, a prolonged sound or iteration mark or a small kana, and no line
 * ends with an opening bracket. Such a character stays with its neighbour, and moves to the
 * next line with it.
 */

import { UNSPACED, wordLocale } from "../scripts";

/** What may not start a line: closing brackets and quotes, punctuation, marks and small kana that belong to what precedes them. */
const NO_START =
  /^[、。，．・：；！？‼⁇⁈⁉,.:;!?）］｝〕〉》」』】〙〗〟’”｠»)\]}ー々〻ゝゞヽヾ‐゠–〜～ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶㇰ-ㇿ]/u;

/** What may not end a line: opening brackets and quotes. */
const NO_END = /[（［｛〔〈《「『【〘〖〝‘“｟«([{]$/u;

/** Joins each segment to the one before it where the rules forbid a break between them. */
function* keptTogether(segments: Iterable<{ segment: string }>): Generator<string> {
  let held = "";
  for (const { segment } of segments) {
    if (held && (NO_END.test(held) || NO_START.test(segment))) held += segment;
    else {
      if (held) yield held;
      held = segment;
    }
  }
  if (held) yield held;
}

export class LineBreaker {
  private readonly words: Intl.Segmenter;
  private readonly graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

  constructor(lang: string) {
    this.words = new Intl.Segmenter(wordLocale(lang), { granularity: "word" });
  }

  /** The units a line may break between, in order; spaces come back as " ". */
  *units(text: string): Generator<string> {
    for (const token of text.split(/( )/)) {
      if (!token) continue;
      if (UNSPACED.test(token)) yield* keptTogether(this.words.segment(token));
      else yield token;
    }
  }

  /** A unit too long for a line, in the pieces it may break between: graphemes, kept together by the same rules. */
  pieces(unit: string): Generator<string> {
    return keptTogether(this.graphemes.segment(unit));
  }
}
