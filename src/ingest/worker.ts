/**
 * Parsing worker: converts batches of raw pages into articles, so that wikitext parsing
 * runs on every core while the main thread reads the XML.
 */
import { serveParsing } from "./parsing";

declare const self: Worker;

serveParsing(self);
