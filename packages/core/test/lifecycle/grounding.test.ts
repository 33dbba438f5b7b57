import { describe, expect, it } from 'vitest';
import { extractAndStoreFacts } from '../../src/memory/extraction/extract.js';
import { groundedInUser } from '../../src/memory/extraction/grounding.js';
import { alice, scriptedJsonModel, world } from './harness.js';

/*
 * Extraction stores what the user said: a candidate supported only by the assistant's reply (a quoted
 * document, a recalled memory, a tool result it passed on) is dropped, and the changeset says so.
 */

describe('extraction is grounded in the user’s words', () => {
  it('a passphrase the assistant quoted from a stored document is not stored as the user’s fact', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([
      {
        facts: [
          { content: 'The staging vault passphrase is heron-7731', category: 'project-context/staging' },
          {
            content: 'User is rotating the staging credentials this week',
            category: 'project-context/staging',
          },
        ],
      },
    ]);
    const { changeset } = await extractAndStoreFacts({
      stores,
      model,
      scope: alice,
      clock,
      messages: [
        {
          role: 'user',
          content: "What's the staging vault passphrase? I'm rotating the staging credentials this week.",
        },
        {
          role: 'assistant',
          content: 'According to the ops runbook, the staging vault passphrase is heron-7731.',
        },
      ],
    });
    const stored = (await stores.facts.list(alice)).map((f) => f.content);
    expect(stored).toEqual(['User is rotating the staging credentials this week']);
    expect(stored.join('\n')).not.toContain('heron');
    expect(changeset.notes?.join('\n')).toMatch(/not said by the user.*7731/i);
  });

  it('what the user said is kept, also when the assistant adds to it', () => {
    const exchange = {
      user: 'I moved to Lisbon last month and I am learning Portuguese.',
      answer: 'Welcome to Lisbon! Portugal is lovely this time of year.',
    };
    expect(groundedInUser('User moved to Lisbon, Portugal, last month', exchange).grounded).toBe(true);
    expect(groundedInUser('User is learning Portuguese', exchange).grounded).toBe(true);
    // Recalled memory the assistant repeated, on a question that does not say it.
    const recall = {
      user: 'When is my dentist appointment?',
      answer: 'Your dentist is Dr. Park on Main Street; the appointment is on Tuesday at 3pm.',
    };
    expect(groundedInUser('User’s dentist is Dr. Park on Main Street', recall).grounded).toBe(false);
    expect(groundedInUser('User has a dentist appointment on Tuesday at 3pm', recall).grounded).toBe(false);
  });
});
