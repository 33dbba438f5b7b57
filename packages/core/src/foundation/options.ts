import type { z } from 'zod';
import { ValidationError } from './errors.js';

/**
 * An option that is not accepted where it was given: a key no option has (`openStores({ memories })`),
 * or a value the option refuses (`withFacts({ mode: 'recal' })`, `budget.maxTokens: -5`, a URL of
 * another scheme). `option` is the key's path (`budget.maxTokens`); `suggestion` the nearest valid key or
 * value when one is close to what was given. Thrown when options are given (a builder's constructor or
 * `with…` call, a store's factory), before anything runs or connects.
 */
export class OptionError extends ValidationError {
  /** The option's path, e.g. `budget.maxTokens` or `mode`. */
  readonly option: string;
  /** The nearest valid key or value, when one is close to what was given. */
  readonly suggestion: string | undefined;

  constructor(where: string, option: string, problem: string, suggestion?: string) {
    const hint = suggestion === undefined ? '' : ` Did you mean "${suggestion}"?`;
    super(`${where}: ${option} ${problem}.${hint}`, {
      details: { where, option, ...(suggestion === undefined ? {} : { suggestion }) },
    });
    this.option = option;
    this.suggestion = suggestion;
  }
}

/**
 * What one option accepts: `true` any value, a list the value must be one of, a zod schema it must pass,
 * or (`{ options }`) an object with options of its own, checked the same way.
 */
export type OptionRule =
  | true
  | readonly (string | number | boolean)[]
  | z.ZodType
  | { readonly options: OptionSpec };

/** The options a call accepts, each with its rule. */
export type OptionSpec = Readonly<Record<string, OptionRule>>;

/** A spec that names every option of `T`, no more (the compiler checks it against the type). */
export type OptionSpecOf<T> = { readonly [K in keyof Required<T>]: OptionRule };

/**
 * Check options against their spec: every key must be one the spec names and every value one its rule
 * accepts; the first that is not throws OptionError with the nearest valid key or value. Undefined values
 * are left to the defaults. `where` names the call (`KiokuBuilder`, `withFacts`).
 */
export function checkOptions(where: string, given: unknown, spec: OptionSpec, path = ''): void {
  if (given === undefined) return;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw new OptionError(where, path || 'options', 'must be an object');
  }
  const known = Object.keys(spec);
  for (const [key, value] of Object.entries(given)) {
    const option = path ? `${path}.${key}` : key;
    if (!Object.hasOwn(spec, key)) {
      const valid = known.length === 0 ? 'none' : known.join(', ');
      throw new OptionError(where, option, `is not an option (valid: ${valid})`, nearest(key, known));
    }
    if (value !== undefined) checkValue(where, option, value, spec[key]!);
  }
}

function checkValue(where: string, option: string, value: unknown, rule: OptionRule): void {
  if (rule === true) return;
  if (Array.isArray(rule)) {
    if (rule.includes(value as string)) return;
    const shown = rule.map((v) => JSON.stringify(v)).join(', ');
    const near = typeof value === 'string' ? nearest(value, rule.map(String)) : undefined;
    throw new OptionError(where, option, `is ${JSON.stringify(value)}, not one of ${shown}`, near);
  }
  if ('options' in rule) {
    checkOptions(where, value, rule.options, option);
    return;
  }
  const result = (rule as z.ZodType).safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const at = issue.path.length === 0 ? option : `${option}.${issue.path.join('.')}`;
    throw new OptionError(where, at, `is invalid: ${issue.message}`);
  }
}

/**
 * The candidate closest to `word` by edit distance (case ignored), when it is close enough to be a typo
 * of it: at most 2 edits, and at most half the word's length.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= 2 && bestDistance <= word.length / 2 ? best : undefined;
}

/** Levenshtein distance, with a transposition counted as one edit (`mdoe` → `mode`). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * A connection URL's scheme checked before anything connects: `postgress://…` is refused with the nearest
 * accepted scheme, instead of reaching a driver that ignores the scheme and fails on DNS or a timeout.
 */
export function checkUrlScheme(where: string, option: string, url: string, schemes: readonly string[]): void {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme !== undefined && schemes.includes(scheme)) return;
  const accepted = schemes.map((s) => `${s}://`).join(', ');
  const given = scheme === undefined ? 'has no scheme' : `has the scheme "${scheme}:"`;
  throw new OptionError(
    where,
    option,
    `${given}; use ${accepted}`,
    scheme === undefined ? undefined : nearest(scheme, schemes),
  );
}
