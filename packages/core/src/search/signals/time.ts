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
  ['a couple of', 2],
  ['a few', 3],
  ['several', 3],
]);

const monthPattern = [...MONTH.keys()].sort((a, b) => b.length - a.length).join('|');
const ORD = '(?:st|nd|rd|th|er|º)?';
const number = `(\\d+|${[...NUMBER_WORDS.keys()].join('|')})`;

/** Which words stand for yesterday, today, last week… (English, German, French, Spanish). */
const RELATIVE_DAYS: ReadonlyArray<readonly [RegExp, number]> = [
  [/\b(?:yesterday|last night|gestern|hier|ayer)\b/giu, -1],
  [/\b(?:today|tonight|this morning|heute|aujourd'hui|hoy)\b/giu, 0],
  [/\b(?:tomorrow|morgen|demain|mañana)\b/giu, 1],
];

const PATTERNS = {
  iso: /\b(\d{4})-(\d{2})-(\d{2})\b/gu,
  dayMonthYear: new RegExp(`\\b(\\d{1,2})${ORD}(?:\\s+of)?\\s+(${monthPattern})\\.?,?\\s+(\\d{4})\\b`, 'giu'),
  monthDayYear: new RegExp(`\\b(${monthPattern})\\.?\\s+(\\d{1,2})${ORD},?\\s+(\\d{4})\\b`, 'giu'),
  dayMonth: new RegExp(`\\b(\\d{1,2})${ORD}(?:\\s+of)?\\s+(${monthPattern})\\b`, 'giu'),
  monthDay: new RegExp(`\\b(${monthPattern})\\.?\\s+(\\d{1,2})${ORD}\\b(?!:)`, 'giu'),
  monthYear: new RegExp(`\\b(${monthPattern})\\.?,?\\s+(\\d{4})\\b`, 'giu'),
  month: new RegExp(`\\b(?:in|during|since|last|this|im|en|de|del)\\s+(${monthPattern})\\b`, 'giu'),
  year: /\b(?:in|during|since|of|im|en|de|del)\s+((?:19|20)\d{2})\b/giu,
  ago: new RegExp(`\\b${number}\\s+(day|week|month|year)s?\\s+ago\\b`, 'giu'),
  last: /\b(?:last|past|previous)\s+(week(?:end)?|month|year)\b/giu,
  thisOne: /\b(?:this|earlier this)\s+(week(?:end)?|month|year)\b/giu,
  otherLast:
    /\b(?:letzte[nm]?\s+(woche|monat|jahr)|(?:la\s+)?(semaine|mois|année)\s+derni[eè]re?|(?:el\s+|la\s+)?(semana|mes|año)\s+pasad[oa])\b/giu,
};

const OTHER_UNIT: Readonly<Record<string, 'week' | 'month' | 'year'>> = {
  woche: 'week',
  monat: 'month',
  jahr: 'year',
  semaine: 'week',
  mois: 'month',
  année: 'year',
  semana: 'week',
  mes: 'month',
  año: 'year',
};

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
 * without a year takes the reference's year. Each part of the text counts once: "8 May, 2023" is one day,
 * not also "May 2023" and "2023".
 */
export function timeSpans(text: string, reference: number): TimeSpan[] {
  const spans: TimeSpan[] = [];
  const taken: Array<[number, number]> = [];
  const free = (m: RegExpMatchArray) => {
    const start = m.index!;
    const end = start + m[0].length;
    if (taken.some(([a, b]) => start < b && end > a)) return false;
    taken.push([start, end]);
    return true;
  };
  const refYear = new Date(reference).getUTCFullYear();
  const monthOf = (name: string) => MONTH.get(name.toLowerCase().replace(/\.$/, ''))!;
  const add = (m: RegExpMatchArray, span: TimeSpan | undefined) => {
    if (span && free(m)) spans.push(span);
  };
  for (const m of text.matchAll(PATTERNS.iso)) add(m, validDay(+m[1]!, +m[2]! - 1, +m[3]!));
  for (const m of text.matchAll(PATTERNS.dayMonthYear)) add(m, validDay(+m[3]!, monthOf(m[2]!), +m[1]!));
  for (const m of text.matchAll(PATTERNS.monthDayYear)) add(m, validDay(+m[3]!, monthOf(m[1]!), +m[2]!));
  for (const m of text.matchAll(PATTERNS.dayMonth)) add(m, validDay(refYear, monthOf(m[2]!), +m[1]!));
  for (const m of text.matchAll(PATTERNS.monthDay)) add(m, validDay(refYear, monthOf(m[1]!), +m[2]!));
  for (const m of text.matchAll(PATTERNS.monthYear)) add(m, monthSpan(+m[2]!, monthOf(m[1]!)));
  for (const m of text.matchAll(PATTERNS.month)) add(m, monthSpan(refYear, monthOf(m[1]!)));
  for (const m of text.matchAll(PATTERNS.year)) add(m, yearSpan(+m[1]!));
  for (const m of text.matchAll(PATTERNS.ago)) {
    const n = NUMBER_WORDS.get(m[1]!.toLowerCase()) ?? Number(m[1]);
    if (n > 0 && n < 1000) add(m, unitSpan(m[2]!.toLowerCase(), reference, n));
  }
  for (const m of text.matchAll(PATTERNS.last)) add(m, unitSpan(m[1]!.toLowerCase(), reference, 1));
  for (const m of text.matchAll(PATTERNS.thisOne)) add(m, unitSpan(m[1]!.toLowerCase(), reference, 0));
  for (const m of text.matchAll(PATTERNS.otherLast)) {
    const unit = OTHER_UNIT[(m[1] ?? m[2] ?? m[3])!.toLowerCase()];
    if (unit) add(m, unitSpan(unit, reference, 1));
  }
  for (const [pattern, shift] of RELATIVE_DAYS) {
    for (const m of text.matchAll(pattern)) add(m, daySpan(reference + shift * DAY));
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
