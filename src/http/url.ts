/** Where the path of a request URL starts. */
export function pathStart(url: string): number {
  return url.indexOf("/", url.indexOf("//") + 2);
}

/** The path of a request URL, without the query string. */
export function pathOf(url: string): string {
  const start = pathStart(url);
  const q = url.indexOf("?", start);
  return url.slice(start, q < 0 ? undefined : q);
}

/** Whether the path of a request URL, which starts at `start`, is `path` (with or without a query string). */
export function pathIs(url: string, start: number, path: string): boolean {
  const end = start + path.length;
  return url.startsWith(path, start) && (url.length === end || url[end] === "?");
}
