/**
 * The index schema: the fields of the text shard (one entry per chunk) and of the title
 * shard (one entry per page, redirect titles as aliases), their boosts, and the analysis both
 * are built and searched with. The builder, the store and the ranking all read it here.
 */
import { fold, indexKey, words } from "../text/analyze";
import type { ShardOptions } from "./shard-types";

export const TEXT_FIELDS = ["text", "section", "title"];
export const TEXT_FIELD = 0;
export const SECTION_FIELD = 1;
/** The page title in every chunk entry: questions name the topic more often than the passage does. */
export const TEXT_BOOSTS = [1, 0.5, 0.5];
const TITLE_FIELDS = ["title", "aliases"];
export const TITLE_BOOSTS = [2, 1];

/** Words as written, folded once per distinct word: the one analysis of analyze.ts, in two steps. */
const analysis = (lang: string) => ({
  tokenize: (s: string) => words(s, lang),
  processTerm: (w: string) => indexKey(fold(w)),
});

export function textShardOptions(lang: string): ShardOptions {
  return { fields: TEXT_FIELDS, positionFields: ["text", "section"], ...analysis(lang) };
}

export function titleShardOptions(lang: string): ShardOptions {
  return { fields: TITLE_FIELDS, ...analysis(lang) };
}
