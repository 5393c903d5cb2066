/**
 * A form POST, checked before anything is done with it (D70, D82): its Origin (without one, its
 * Referer, if it has one) must be this server's (scheme, host and port), its media type exactly application/x-www-form-urlencoded
 * (parameters allowed), its body at most MAX_FORM_BYTES, counted while it is read (../body.ts:
 * reading stops there, chunked or not), and its CSRF token the one expected, compared in
 * constant time.
 */
import { timingSafeEqual } from "node:crypto";
import { boundedText } from "../body";
import { Refused } from "./respond";
import type { Visit } from "./visit";

/** A form's body is a few fields; anything longer is not one of ours. */
const MAX_FORM_BYTES = 8192;
const FORM_TYPE = "application/x-www-form-urlencoded";

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether a form's Origin is this server: TOME_PUBLIC_URL's origin (a proxy may pass another
 * Host), or the Host it was asked for over the scheme it came by (https when D70's Secure rule
 * says so). `null` and anything that is not an origin are not.
 */
function sameOrigin(v: Visit, origin: string): boolean {
  if (origin === v.site.publicUrl?.origin) return true;
  if (!URL.canParse(origin)) return false;
  const from = new URL(origin);
  return from.host === v.request.headers.get("host") && from.protocol === (v.secure ? "https:" : "http:");
}

/**
 * Refuses a POST sent from another site (D70), before anything is done with it: its Origin, or without one (a client
 * that sends none) its Referer when there is one, names another origin.
 */
export function checkOrigin(v: Visit): void {
  const origin = v.request.headers.get("origin");
  const referer = v.request.headers.get("referer");
  const from = origin ?? (referer && URL.canParse(referer) ? new URL(referer).origin : referer || null);
  if (from !== null && !sameOrigin(v, from))
    throw new Refused(403, "Refused", "This form was sent from another site, so it was not acted on.");
}

/** A form whose CSRF token is missing or not the one expected: an old page's, or one whose cookie has expired. */
export class FormExpired extends Refused {
  constructor() {
    super(
      403,
      "Form expired",
      "This form could not be checked (its security token is missing or old), so nothing was done. Go back, reload the page and try again.",
    );
  }
}

/** The fields of a form POST, after its origin, type, length and CSRF token (against `expected`) are checked. */
export async function readForm(v: Visit, expected: string | undefined): Promise<URLSearchParams> {
  checkOrigin(v);
  const type = v.request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== FORM_TYPE)
    throw new Refused(415, "Not a form", `The dashboard takes its own forms only (${FORM_TYPE}).`);
  const text = await v.outside(boundedText(v.request, MAX_FORM_BYTES));
  // The rest of the body is not read: the connection is closed after the answer.
  if (text === undefined)
    throw new Refused(413, "Too long", "That form is longer than any of the dashboard's.", { connection: "close" });
  const form = new URLSearchParams(text);
  const csrf = form.get("csrf") ?? "";
  if (!expected || !csrf || !sameText(csrf, expected)) throw new FormExpired();
  return form;
}
