import { customType } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL's text output for `timestamptz` with the default `DateStyle = ISO`:
 * `2025-01-01 00:00:00.123+00`, offsets in the session's time zone (`+05:30`, even `+05:53:28`), ` BC`.
 */
const PG_TIMESTAMP =
  /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?( BC)?$/;

/** The same at offset `+00` with a 4-digit year and at most milliseconds: already ISO but for `T`, `Z` and zeros. */
const PG_UTC = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,3})?\+00$/;
const DOT = 46;

/**
 * The ISO string core writes (`2025-01-01T00:00:00.123Z`) for a `timestamptz` value as PostgreSQL prints it.
 * Parsed by hand: `new Date()` on this format misreads years below 100 and offsets with seconds. (A plain
 * Error, which the stores report as a StorageError: this module stays free of runtime imports of core, so
 * drizzle-kit can load the schema without a build.)
 */
export function isoFromPg(value: string): string {
  // Most values: a UTC session and a 4-digit year, rewritten without building a Date (a 128-fact page has
  // 256 timestamps; the general path below cost ~1 µs each, a third of the adapter's time on such a read).
  // `test` and slices rather than `exec`: no match array and captures per value.
  if (PG_UTC.test(value)) {
    const fraction = value.charCodeAt(19) === DOT ? value.slice(20, -3) : '';
    return `${value.slice(0, 10)}T${value.slice(11, 19)}.${fraction.padEnd(3, '0')}Z`;
  }
  const m = PG_TIMESTAMP.exec(value);
  if (!m) {
    throw new Error(
      `Unexpected timestamp "${value}" from PostgreSQL; Kioku needs the default DateStyle (ISO).`,
    );
  }
  const [, y, mo, d, h, mi, s, frac = '', sign, oh, om = '0', os = '0', bc] = m;
  const date = new Date(0);
  const year = Number(y);
  date.setUTCFullYear(bc ? 1 - year : year, Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0').slice(0, 3)));
  const offsetMs = (Number(oh) * 3600 + Number(om) * 60 + Number(os)) * 1000;
  return new Date(date.getTime() - (sign === '-' ? -offsetMs : offsetMs)).toISOString();
}

/**
 * `timestamp(3) with time zone` holding core's ISO strings: written as given (PostgreSQL parses ISO 8601
 * with any offset and keeps milliseconds), read back as `toISOString()` output.
 */
export const isoTimestamp = customType<{ data: string; driverData: string }>({
  dataType: () => 'timestamp (3) with time zone',
  toDriver: (value) => value,
  fromDriver: (value) => isoFromPg(value),
});
