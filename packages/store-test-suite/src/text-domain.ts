import type { Scope } from '@kioku/core';
import { expect, it } from 'vitest';
import type { Fixture } from './harness.js';
import { expectKiokuError, randomScope } from './helpers.js';

/** Text outside Kioku's domain (core's `records/text-domain.ts`): refused by every store with VALIDATION. */
export const OUTSIDE_TEXT_DOMAIN: readonly [string, string][] = [
  ['a lone high surrogate', 'half \ud800 pair'],
  ['a lone low surrogate', 'half \udc00 pair'],
  ['a surrogate cut at the end', 'cut \ud83d'],
  ['NUL', 'nul \u0000 inside'],
];

/** Text every backend must store and return byte for byte. */
export const STRANGE_BUT_VALID =
  'astral 😀🎉👍🏽 e\u0301 combining · RTL \u05e9\u05dc\u05d5\u05dd \u202ehidden\u202c · U+FFFD \ufffd · ' +
  'U+2028\u2028U+2029\u2029 · \u0001\u001f control · zero\u200bwidth · 𝕂𝕚𝕠𝕜𝕦 · 記憶 · 🏳️‍🌈 · \ud83d\ude00';

export interface TextDomainCase<S, Sc extends Scope = Scope> {
  /** Where the text goes, e.g. "fact content". */
  field: string;
  /** Store `text` in that field. */
  write(store: S, scope: Sc, text: string): Promise<unknown>;
  /** The field's stored text (undefined when nothing is stored), read back through the store's API. */
  read(store: S, scope: Sc): Promise<unknown>;
  /** The scope to write in (default: a random user scope). */
  scope?: () => Sc;
}

interface Snapshots {
  snapshot(selector: { userId: string }): Promise<unknown>;
  restore(snapshot: unknown): Promise<unknown>;
}

/** `value` with every string equal to `from` replaced by `to`. */
function replaceText(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((v) => replaceText(v, from, to));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceText(v, from, to)]));
  }
  return value;
}

/**
 * One text domain on every backend: text outside it is refused (VALIDATION, nothing stored), and text
 * inside it, however strange, reads back identically.
 */
export function textDomainTests<S, Sc extends Scope = Scope>(
  fx: Fixture<S>,
  cases: readonly TextDomainCase<S, Sc>[],
): void {
  for (const c of cases) {
    const newScope = c.scope ?? (() => randomScope() as Sc);
    for (const [name, text] of OUTSIDE_TEXT_DOMAIN) {
      it(`${c.field} with ${name} is refused (VALIDATION) and nothing is stored`, async () => {
        const scope = newScope();
        const error = await expectKiokuError(c.write(fx.store, scope, text), 'VALIDATION');
        expect(error.message).toMatch(/surrogate|NUL/);
        expect(await c.read(fx.store, scope)).toBeUndefined();
      });
    }
    it(`${c.field} with astral, combining, RTL, U+FFFD, U+2028 and control characters reads back identically`, async () => {
      const scope = newScope();
      await c.write(fx.store, scope, STRANGE_BUT_VALID);
      expect(await c.read(fx.store, scope)).toBe(STRANGE_BUT_VALID);
    });
    it(`a snapshot whose ${c.field} has a lone surrogate is refused on restore and changes nothing`, async () => {
      const scope = newScope();
      await c.write(fx.store, scope, STRANGE_BUT_VALID);
      const store = fx.store as unknown as Snapshots;
      const snapshot = await store.snapshot({ userId: scope.userId });
      const hostile = replaceText(snapshot, STRANGE_BUT_VALID, 'half \ud800 pair');
      await expectKiokuError(store.restore(hostile), 'VALIDATION');
      expect(await c.read(fx.store, scope)).toBe(STRANGE_BUT_VALID);
    });
  }
}
