/** The path of a request URL, without the query string. */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", start);
  return url.slice(start, q < 0 ? undefined : q);
}
