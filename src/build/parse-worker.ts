/**
 * A build's parsing worker: ingest's, and each article's chunks analysed for the text index
 * beside the parse (D139), so that the main thread, which keeps the postings, only numbers
 * each page's keys.
 */
import { serveParsing } from "../ingest";
import { textPageAnalyser, transferOf } from "../search";
import type { AnalysedArticle } from "./analysed";

declare const self: Worker;

serveParsing(self, (lang) => {
  const analyser = textPageAnalyser(lang);
  return (article) => {
    const analysed = analyser.analyse(article);
    (article as AnalysedArticle).analysed = analysed;
    return transferOf(analysed);
  };
});
