/**
 * Time expressions in text, as spans of time: "on 8 May, 2023", "May 2023", "in 2022", "yesterday",
 * "last week", "three days ago", "2023-05-08". Relative expressions are resolved against a reference
 * time: the query's now for a question, the record's event time for a stored text (so "yesterday" in a
 * turn of 8 May means 7 May). English first; month names and the commonest relative words also in German,
 * French and Spanish (cheap to add, and their absence would silently drop every date in those languages).
 * All computation is in UTC, as stored timestamps are.
 */

/** A span of time, `[from, to)` in milliseconds since the epoch. */
export interface TimeSpan {
  from: number;
  to: number;
}

const DAY = 86_400_000;

const MONTH_NAMES: ReadonlyArray<readonly string[]> = [
  ['january', 'jan', 'januar', 'janvier', 'enero'],
  ['february', 'feb', 'februar', 'février', 'fevrier', 'febrero'],
  ['march', 'märz', 'maerz', 'mars', 'marzo'],
  ['april', 'apr', 'avril', 'abril'],
  ['may', 'mai', 'mayo'],
  ['june', 'jun', 'juni', 'juin', 'junio'],
  ['july', 'jul', 'juli', 'juillet', 'julio'],
  ['august', 'aug', 'août', 'aout', 'agosto'],
  ['september', 'sep', 'sept', 'septembre', 'septiembre'],
  ['october', 'oct', 'oktober', 'octobre', 'octubre'],
  ['november', 'nov', 'novembre', 'noviembre'],
  ['december', 'dec', 'dezember', 'décembre', 'decembre', 'diciembre'],
];

const MONTH: ReadonlyMap<string, number> = new Map(
  MONTH_NAMES.flatMap((names, month) => names.map((name) => [name, month] as const)),
);

const NUMBER_WORDS: ReadonlyMap<string, number> = new Map([
  ['a', 1],
  ['an', 1],
  ['one', 1],
  ['two', 2],
  ['three', 3],
  ['four', 4],
  ['five', 5],
  ['six', 6],
  ['seven', 7],
  ['eight', 8],
  ['nine', 9],
  ['ten', 10],
  ['several', 3],
]);

/** Relative day words (English, German, French, Spanish) → days from the reference. */
const RELATIVE_DAY: ReadonlyMap<string, number> = new Map([
  ['yesterday', -1],
  ['gestern', -1],
  ['ayer', -1],
  ['today', 0],
  ['tonight', 0],
  ['heute', 0],
  ['hoy', 0],
  ["aujourd'hui", 0],
  ['tomorrow', 1],
  ['demain', 1],
  ['mañana', 1],
]);

type Unit = 'day' | 'week' | 'weekend' | 'month' | 'year';

const UNIT: ReadonlyMap<string, Unit> = new Map([
  ['day', 'day'],
  ['days', 'day'],
  ['week', 'week'],
  ['weeks', 'week'],
  ['weekend', 'weekend'],
  ['month', 'month'],
  ['months', 'month'],
  ['year', 'year'],
  ['years', 'year'],
  ['woche', 'week'],
  ['monat', 'month'],
  ['jahr', 'year'],
  ['semaine', 'week'],
  ['mois', 'month'],
  ['année', 'year'],
  ['semana', 'week'],
  ['mes', 'month'],
  ['año', 'year'],
]);

/** Words before a unit that mean "the one before this one" (English, German) … */
const LAST_BEFORE = new Set(['last', 'past', 'previous', 'letzte', 'letzten', 'letztem', 'letzter']);
/** … and after it (French, Spanish). */
const LAST_AFTER = new Set(['dernière', 'dernier', 'pasada', 'pasado']);
/** Words before a month or a year that make it a time ("in May", "during 2022"). */
const IN = new Set(['in', 'during', 'since', 'last', 'this', 'of', 'im', 'en', 'de', 'del']);

const OF = new Set(['of', 'de']);
const PART_OF_DAY = new Set(['morning', 'afternoon', 'evening']);

const WORDS = /[\p{L}\p{N}'’]+(?:-\d+)*/gu;
const DAY_NUMBER = /^(\d{1,2})(?:st|nd|rd|th|er|º)?$/;
const YEAR = /^(?:19|20)\d{2}$/;
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

const dayStart = (t: number) => Math.floor(t / DAY) * DAY;
const daySpan = (t: number): TimeSpan => ({ from: dayStart(t), to: dayStart(t) + DAY });
const monthSpan = (year: number, month: number): TimeSpan => ({
  from: Date.UTC(year, month, 1),
  to: Date.UTC(year, month + 1, 1),
});
const yearSpan = (year: number): TimeSpan => ({ from: Date.UTC(year, 0, 1), to: Date.UTC(year + 1, 0, 1) });

/** The Monday-to-Sunday week holding `t`. */
function weekSpan(t: number): TimeSpan {
  const start = dayStart(t) - ((new Date(t).getUTCDay() + 6) % 7) * DAY;
  return { from: start, to: start + 7 * DAY };
}

function unitSpan(unit: string, reference: number, back: number): TimeSpan {
  const d = new Date(reference);
  switch (unit) {
    case 'day':
      return daySpan(reference - back * DAY);
    case 'week':
      return weekSpan(reference - back * 7 * DAY);
    case 'weekend': {
      const week = weekSpan(reference - back * 7 * DAY);
      return { from: week.from + 5 * DAY, to: week.to };
    }
    case 'month':
      return monthSpan(d.getUTCFullYear(), d.getUTCMonth() - back);
    default:
      return yearSpan(d.getUTCFullYear() - back);
  }
}

function validDay(year: number, month: number, day: number): TimeSpan | undefined {
  if (!(day >= 1 && day <= 31)) return undefined;
  const t = Date.UTC(year, month, day);
  return new Date(t).getUTCMonth() === month ? daySpan(t) : undefined;
}

/**
 * The spans of time `text` names, resolved against `reference` (ms since the epoch) where relative. A date
 * without a year takes the reference's year. Each word counts once: "8 May, 2023" is one day, not also
 * "May 2023" and "2023". One pass over the words (a regex per pattern was ~70 µs a text; this is a few).
 */
export function timeSpans(text: string, reference: number): TimeSpan[] {
  const words = text.toLowerCase().match(WORDS);
  if (!words) return [];
  const spans: TimeSpan[] = [];
  const refYear = new Date(reference).getUTCFullYear();
  // Regular expressions only for words that start with a digit (most words do not).
  const digit = (word: string | undefined) =>
    word !== undefined && word.charCodeAt(0) <= 57 && word.charCodeAt(0) >= 48;
  const dayNumber = (word: string | undefined) => {
    const m = digit(word) ? DAY_NUMBER.exec(word!) : null;
    return m ? Number(m[1]) : undefined;
  };
  const yearAt = (i: number) => (digit(words[i]) && YEAR.test(words[i]!) ? Number(words[i]) : undefined);
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const month = MONTH.get(word);
    const iso = digit(word) ? ISO_DAY.exec(word) : null;
    if (iso) {
      const span = validDay(+iso[1]!, +iso[2]! - 1, +iso[3]!);
      if (span) spans.push(span);
      continue;
    }
    // "8 May 2023", "8th of May", "8 May".
    const day = dayNumber(word);
    if (day !== undefined) {
      // "of" (English) or "de" (Spanish) may stand between the day, the month and the year.
      const at = OF.has(words[i + 1] ?? '') ? i + 2 : i + 1;
      const named = MONTH.get(words[at] ?? '');
      if (named !== undefined) {
        const yearIndex = OF.has(words[at + 1] ?? '') ? at + 2 : at + 1;
        const year = yearAt(yearIndex);
        const span = validDay(year ?? refYear, named, day);
        if (span) spans.push(span);
        i = year === undefined ? at : yearIndex;
        continue;
      }
    }
    if (month !== undefined) {
      // "May 8, 2023", "May 8", "May 2023", "in May" (a bare "may" is a verb).
      const next = dayNumber(words[i + 1]);
      const year = yearAt(i + 1);
      if (next !== undefined) {
        const y = yearAt(i + 2);
        const span = validDay(y ?? refYear, month, next);
        if (span) spans.push(span);
        i += y === undefined ? 1 : 2;
      } else if (year !== undefined) {
        spans.push(monthSpan(year, month));
        i += 1;
      } else if (IN.has(words[i - 1] ?? '')) spans.push(monthSpan(refYear, month));
      continue;
    }
    if (yearAt(i) !== undefined && IN.has(words[i - 1] ?? '')) {
      spans.push(yearSpan(Number(word)));
      continue;
    }
    const shift = RELATIVE_DAY.get(word);
    if (shift !== undefined) {
      spans.push(daySpan(reference + shift * DAY));
      continue;
    }
    const before = words[i - 1] ?? '';
    if ((word === 'night' && before === 'last') || (PART_OF_DAY.has(word) && before === 'this')) {
      spans.push(daySpan(reference - (word === 'night' ? DAY : 0)));
      continue;
    }
    const unit = UNIT.get(word);
    if (unit === undefined) continue;
    if (words[i + 1] === 'ago') {
      // "3 days ago", "two weeks ago", "a few months ago", "a couple of years ago".
      const n = NUMBER_WORDS.get(before) ?? (/^\d+$/.test(before) ? Number(before) : undefined);
      const few = before === 'few' || before === 'couple' || (before === 'of' && words[i - 2] === 'couple');
      const back = few ? (before === 'few' ? 3 : 2) : n;
      if (back !== undefined && back > 0 && back < 1000) spans.push(unitSpan(unit, reference, back));
      i += 1;
    } else if (LAST_BEFORE.has(before) || LAST_AFTER.has(words[i + 1] ?? '')) {
      spans.push(unitSpan(unit, reference, 1));
    } else if (before === 'this') spans.push(unitSpan(unit, reference, 0));
  }
  return spans;
}

/** The day an instant falls on, as a span. */
export function dayOf(time: number): TimeSpan {
  return daySpan(time);
}

/** Whether any span of `a` overlaps any span of `b`. */
export function overlaps(a: readonly TimeSpan[], b: readonly TimeSpan[]): boolean {
  return a.some((x) => b.some((y) => x.from < y.to && y.from < x.to));
}

/** A question asking when something happened or for how long ("when did…", "how long…", "what year…"). */
const ASKS_WHEN =
  /(?:^|[^\p{L}])(?:when|what (?:time|day|date|week|month|year)|which (?:day|date|week|month|year)|how long|since when|wann|seit wann|wie lange|quand|depuis quand|combien de temps|cuándo|cuando|desde cuándo|cuánto tiempo)(?=$|[^\p{L}])/iu;

/** How long something took or lasted ("for 3 years", "seven years now", "a few weeks"). */
const DURATION =
  /(?:^|[^\p{L}])(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|few|several|couple of)\s+(?:days?|weeks?|months?|years?|decades?)(?=$|[^\p{L}])/iu;

/** Whether a question asks when something happened or how long it lasted. */
export function asksWhen(query: string): boolean {
  return ASKS_WHEN.test(query);
}

/** Whether a text tells a time or a duration ("last week", "yesterday", "on 8 May", "for 3 years"). */
export function tellsTime(text: string, mentions: readonly TimeSpan[]): boolean {
  return mentions.length > 0 || DURATION.test(text);
}
