import { describe, expect, it } from 'vitest';
import { inferPreferences, touchesSensitiveTopic } from '../../src/memory/dream/preferences.js';
import { alice, scriptedJsonModel, world } from './harness.js';

/*
 * The model's occurrence count is a claim: the code counts the distinct user messages it cites that exist
 * in the log (or, when it cites none, caps the claim at the log's user messages), and says what it
 * discarded.
 */

describe('preference occurrences are counted from the log', () => {
  it('a claim of 5 from a one-message log is capped to 1, so a minor preference is not written', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([
      { preferences: [{ content: 'User prefers tabs over spaces', sentiment: 'minor', occurrences: 5 }] },
    ]);
    const changeset = await inferPreferences({
      facts: stores.facts,
      model,
      scope: alice,
      log: [{ text: 'Use tabs, please.', role: 'user' }],
      clock,
    });
    expect(changeset.operations).toEqual([]);
    expect(changeset.notes?.join('\n')).toMatch(/claimed 5 occurrences; the log shows at most 1/);
  });

  it('cited messages are counted: numbers outside the log and the agent’s replies are discarded', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([
      {
        preferences: [
          {
            content: 'User wants answers in metric units',
            sentiment: 'mildly_frustrated',
            occurrences: 4,
            messages: [1, 2, 2, 9],
          },
          {
            content: 'User wants no emoji',
            sentiment: 'mildly_frustrated',
            occurrences: 2,
            messages: [1, 3],
          },
        ],
      },
    ]);
    const changeset = await inferPreferences({
      facts: stores.facts,
      model,
      scope: alice,
      log: [
        { text: 'Metric units please, and no emoji.', role: 'user' },
        { text: 'Sure! 🙂 It is 5 miles.', role: 'assistant' },
        { text: 'Metric!! And I said no emoji.', role: 'user' },
      ],
      clock,
    });
    // Metric: messages 1 and 2 cited, 2 is the agent's, 9 does not exist → 1 occurrence: not written.
    // No emoji: 1 and 3, both the user's → 2: written, with the counted number.
    expect(changeset.operations.map((op) => op.op === 'create' && op.after.content)).toEqual([
      'User wants no emoji',
    ]);
    const [created] = changeset.operations;
    expect(created?.op === 'create' && created.after.metadata.occurrences).toBe(2);
    const notes = changeset.notes?.join('\n') ?? '';
    expect(notes).toContain(
      "The model claimed 4 occurrences; counted 1 (messages 1), discarded 2 (the agent's), 9 (not in the log)",
    );
  });

  it('the permission flag covers PINs, passcodes and one-time codes', () => {
    for (const text of [
      'User wants the card PIN read back before payments',
      'User prefers to set the phone passcode themselves',
      'User never wants one-time codes sent by SMS',
      'User shares verification codes only by phone',
    ]) {
      expect(touchesSensitiveTopic(text), text).toBe(true);
    }
    expect(touchesSensitiveTopic('User likes pineapple on pizza')).toBe(false);
  });
});
