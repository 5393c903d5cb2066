/**
 * A build's parsing worker: ingest's, and each article's chunks analysed for the text index
 * beside the parse (D139), so that the main thread, which keeps the postings, only numbers
 * each page's keys.
 */
import { serveParsing } from "../ingest";
import { collectEvery, textPageAnalyser, transferOf } from "../search";
import type { AnalysedArticle } from "./analysed";

declare const self: Worker;

/** Bytes of analysed pages sent between two collections of this worker's heap. */
const SENT_BETWEEN_COLLECTIONS = 32 << 20;

serveParsing(self, (lang) => {
  const analyser = textPageAnalyser(lang);
  const collect = collectEvery(SENT_BETWEEN_COLLECTIONS);
  return (article) => {
    const analysed = analyser.analyse(article);
    (article as AnalysedArticle).analysed = analysed;
    collect(analysed);
    return transferOf(analysed);
  };
});
