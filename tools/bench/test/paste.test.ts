import { describe, expect, it } from 'vitest';
import { PASTE_FRAMINGS, type PastePath, runPaste } from '../src/paste-framings.js';
import { attackTexts, ownWords } from '../src/paste-suite.js';

/*
 * Issue 41: an attack text the user pastes ("here is what the release page said: …", an e-mail, a code
 * fence, a `>` blockquote) is not the user's wish. Through KiokuBuilder with a scripted model, along each
 * write path, nothing of it is stored as trusted or shown as trusted the next turn; it waits in quarantine
 * with a reason the user can read. The user's own orders and quotes of their own words stay trusted.
 */

const texts = attackTexts();
/** Every fourth text (each source and language is there), where all 69 would add time and nothing new. */
const some = texts.filter((_, i) => i % 4 === 0);
const framing = (id: string) => PASTE_FRAMINGS.find((f) => f.id === id)!;

/** How many of `texts`, pasted with `framingId` and written along `path`, were stored or shown as trusted. */
async function poisoned(framingId: string, path: PastePath, sample: readonly string[]) {
  let stored = 0;
  let shown = 0;
  let pastedReason = 0;
  for (const text of sample) {
    const outcome = await runPaste(text, framing(framingId).message(text), path, framingId);
    expect(outcome.stored, text).toBe(true);
    if (outcome.storedTrusted) stored++;
    if (outcome.shownTrusted) shown++;
    if (outcome.reasons.some((r) => r.startsWith('from text you pasted'))) pastedReason++;
  }
  return { stored, shown, pastedReason };
}

describe('pasted attack texts are held for confirmation, on every write path', () => {
  it('the corpus holds the 69 texts the detector flags on their own', () => {
    expect(texts).toHaveLength(69);
  });

  it.each([['said', 'save_memory']] as const)(
    '%s via %s: 0 of 69 stored or shown as trusted, each "from text you pasted"',
    async (id, path) => {
      expect(await poisoned(id, path, texts)).toEqual({ stored: 0, shown: 0, pastedReason: texts.length });
    },
  );

  it.each([
    ['said', 'extraction'],
    ['x-said', 'save_memory'],
    ['email', 'extraction'],
    ['email', 'relevant'],
    ['fence', 'save_memory'],
    ['blockquote', 'save_memory'],
    ['blockquote', 'relevant'],
    ['quoted', 'relevant'],
    ['paste-question', 'extraction'],
  ] as const)('%s via %s: none stored or shown as trusted, each "from text you pasted"', async (id, path) => {
    expect(await poisoned(id, path, some)).toEqual({ stored: 0, shown: 0, pastedReason: some.length });
  });

  it('a URL the user asked a tool to read does not make the page’s "send to that URL" trusted', async () => {
    const withUrl = texts.filter((t) => /https?:\/\//.test(t));
    const result = await poisoned('url-named', 'save_memory', withUrl);
    expect(result.stored).toBe(0);
    expect(result.shown).toBe(0);
  });
});

describe('the user’s own words stay trusted', () => {
  it('own orders to their addresses, own standing rules and quotes of their own earlier words are not quarantined', async () => {
    const held: string[] = [];
    for (const c of ownWords()) {
      const outcome = await runPaste(c.memory, c.message, 'save_memory');
      expect(outcome.stored).toBe(true);
      if (!outcome.storedTrusted) held.push(c.message);
    }
    expect(held).toEqual([]);
  });
});
