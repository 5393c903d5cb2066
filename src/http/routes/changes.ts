/** GET /v1/changes (api.md 4.3; D12). */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { CACHED_HEADERS, described, FAULT, JSON_ONLY, KEY_ERRORS, KEYED, NOT_MODIFIED } from "../docs";
import { ApiError, echoed, errorBody, ERRORS } from "../errors";
import { route } from "../params";
import { ChangesQuery, ChangesResponse, ErrorBody } from "../schemas";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export const changesRoutes = ({ answers }: ApiContext) => {
  const changes = route({ query: ChangesQuery, readers: { since: readQuerySince } }, ({ query }) =>
    answers.changes(query),
  );
  return new Elysia().get("/v1/changes", changes.handler, {
    ...changes.hooks,
    parse: JSON_ONLY,
    response: {
      200: described(ChangesResponse, "Pages with ts_unix >= since, by ts_unix then page_id", {
        headers: CACHED_HEADERS,
      }),
      ...NOT_MODIFIED,
      400: described(ErrorBody, "`since must be unix seconds or RFC3339`, or `invalid_parameter` for limit or offset", {
        examples: {
          [ERRORS.sinceFormat.code]: {
            ...errorBody(ERRORS.sinceFormat),
            details: { parameter: "since", value: "yesterday", constraint: "unix seconds or RFC3339" },
          },
          [ERRORS.invalidParameter.code]: {
            ...errorBody(ERRORS.invalidParameter, "limit", "an integer from 1 to 1000 (base-10 digits)"),
            details: { parameter: "limit", value: "0", constraint: "an integer from 1 to 1000 (base-10 digits)" },
          },
        },
      }),
      ...KEY_ERRORS,
      ...FAULT,
    },
    detail: {
      ...KEYED,
      operationId: "listChanges",
      tags: ["Pages"],
      summary: "Pages changed since a time",
      description:
        "Pages whose last modification is at or after since, ordered by ts_unix then page_id, so a client can poll with the last ts_unix it saw.",
    },
  });
};

/**
 * readSince of a query string's since. A query string reads + as a space, so an offset sent unescaped, as
 * `?since=$(date -Iseconds)` sends it, arrives as "2016-01-31T12:00:00 01:00": refused, its message says so.
 */
function readQuerySince(raw: string): number {
  try {
    return readSince(raw);
  } catch (error) {
    const plus = raw.replace(/ (?=\d{2}:\d{2}$)/, "+");
    if (!(error instanceof ApiError) || plus === raw) throw error;
    try {
      readSince(plus);
    } catch {
      throw error;
    }
    const hint = `Its zone's + was read as a space, as a query string reads one: send it as %2B (${plus.replace("+", "%2B")}).`;
    throw new ApiError(error.status, error.code, `${error.message} ${hint}`, error.details);
  }
}

/** D12: Unix seconds (digits only) or an RFC 3339 date-time with a zone, as whole Unix seconds (never below 0). */
export function readSince(raw: string): number {
  const row = ERRORS.sinceFormat;
  const fail = () =>
    new ApiError(row.status, row.code, row.message(), {
      parameter: "since",
      value: echoed(raw),
      constraint: "unix seconds or RFC3339",
    });
  if (/^[0-9]+$/.test(raw)) {
    const n = Number(raw);
    if (n > Number.MAX_SAFE_INTEGER) throw fail();
    return n;
  }
  const m = RFC3339.exec(raw);
  if (!m) throw fail();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7] ? Number(m[7]) : 0;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 60)
    throw fail();
  let offset = 0;
  if (!m[8]) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) throw fail();
    offset = (m[9] === "-" ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const minuteStart = utc(year, month - 1, day, hour, minute) / 1000 - offset;
  // A leap second (:60) is the first instant of the next minute, read only where UTC had one (RFC 3339 §5.7).
  const next = minuteStart + 60;
  if (second === 60 && (next % 86_400 !== 0 || !LEAP_SECOND_DAYS.has(new Date(next * 1000).toISOString().slice(0, 10))))
    throw fail();
  const seconds = minuteStart + second + fraction;
  return Math.max(0, Math.ceil(seconds));
}

/**
 * The UTC days whose next began after a leap second, named by that next day (its first instant is the :60's): every
 * one inserted since 1972, as IERS Bulletin C announced them (RFC 3339 Appendix D, then 1998 to 2016). None since,
 * none announced; a new one, if ever (CGPM 2022 ends them by 2035), is added here.
 */
const LEAP_SECOND_DAYS = new Set([
  "1972-07-01",
  "1973-01-01",
  "1974-01-01",
  "1975-01-01",
  "1976-01-01",
  "1977-01-01",
  "1978-01-01",
  "1979-01-01",
  "1980-01-01",
  "1981-07-01",
  "1982-07-01",
  "1983-07-01",
  "1985-07-01",
  "1988-01-01",
  "1990-01-01",
  "1991-01-01",
  "1992-07-01",
  "1993-07-01",
  "1994-07-01",
  "1996-01-01",
  "1997-07-01",
  "1999-01-01",
  "2006-01-01",
  "2009-01-01",
  "2012-07-01",
  "2015-07-01",
  "2017-01-01",
]);

/**
 * Milliseconds since the epoch of a UTC date and time, its year as written: Date.UTC reads a year from 0 to 99 as
 * 1900 to 1999, so 0099-01-01 was 1999-01-01 (pages of 1970 to 1998 left out) and 0000-02-29 was refused (1900 has none).
 */
function utc(year: number, monthIndex: number, day: number, hour = 0, minute = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, 0, 0);
  return date.getTime();
}

function daysIn(year: number, month: number): number {
  return new Date(utc(year, month, 0)).getUTCDate();
}
