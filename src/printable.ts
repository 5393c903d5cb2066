/**
 * Text from outside (a key's name, a key store edited by hand, a command's arguments) as printed on a terminal: what a
 * terminal would act on, or what would turn the text's direction, written as \u escapes. Used by access (names, key
 * stores), cli (arguments) and the layers whose errors name a file (ingest, snapshot, build), below them all.
 */

/**
 * What a key's name may not hold: control characters (a terminal acts on ESC and the other C0 and C1 controls, and a
 * line break makes rows of its own in `keys list`) and the marks that turn the direction of the text after them or
 * around them (the embeddings and isolates, and the left-to-right, right-to-left and Arabic letter marks).
 * An account holder names keys on the dashboard; the operator reads the names in a terminal.
 */
export const UNSHOWN = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const UNSHOWN_ALL = new RegExp(UNSHOWN.source, "gu");
const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * A key's name as printed on a terminal: what UNSHOWN names written as \u escapes (a name kept before they were refused).
 * Key ids and account names read from a store are printed through it too: keys.json edited by hand may hold anything.
 */
export function printableName(name: string): string {
  return name.replace(UNSHOWN_ALL, escaped);
}

/**
 * A path or value put into a command line a message tells the person to run, so that the line pasted as printed names
 * that file: as it is when a shell reads it as one word (TOME_DATA=/srv/data), in single quotes when it would read it as
 * more than one or expand it (a space, a quote, $: /srv/my data, ~/Wiki copies/en.tome), and in bash's $'…' when it
 * holds what printableName escapes (a line break, ESC), each such character's UTF-8 bytes written \xHH: a printed \u
 * escape pasted in single quotes would name another file. A relative name starting with - is given ./ so that the
 * command does not read it as an option.
 */
export function shellWord(name: string): string {
  const path = name.startsWith("-") ? `./${name}` : name;
  if (UNSHOWN.test(path)) return `$'${path.replace(/[\\']/g, "\\$&").replace(UNSHOWN_ALL, bytesEscaped)}'`;
  return /^[\w./:=@%+,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

const bytesEscaped = (c: string) =>
  [...new TextEncoder().encode(c)].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");

/**
 * JSON text safe to print on a terminal, read back as the same value: JSON.stringify escapes the C0 controls only, and
 * leaves the C1 ones (U+009B is a terminal's CSI, as ESC [ is) and the direction marks raw in the strings.
 */
export function printableJson(value: unknown): string {
  // A line break left raw is the layout's: JSON.stringify escapes every one in a string.
  return printableMessage(JSON.stringify(value, null, 2));
}

/**
 * A message for a terminal, its own line breaks kept: what every command prints of an error, whatever named a path
 * raw in it (a file system's own message, a path given to the library). A path a message names is put in through
 * printableName, its line breaks escaped too.
 */
export function printableMessage(text: string): string {
  return text.replace(UNSHOWN_ALL, (c) => (c === "\n" ? c : escaped(c)));
}
