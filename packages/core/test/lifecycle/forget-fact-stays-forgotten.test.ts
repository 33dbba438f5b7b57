import { describe, expect, it } from 'vitest';
import { newChangeset } from '../../src/memory/changesets/changeset.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import { extractSession } from '../../src/memory/extraction/extract-session.js';
import { forgetFact } from '../../src/memory/forget/cascade.js';
import { SuppressionList } from '../../src/memory/trust/suppression.js';
import { ScriptedModel } from '../../src/testing.js';
import { alice, world } from './harness.js';

/*
 * A forgotten fact leaves no copy in the changeset log that created it (the entry stays, as a tombstone
 * without the text), and extraction run again over the same session does not store it again.
 */

const SECRET = 'User’s daughter Mia was diagnosed with leukemia in March';

/**
 * Every session Kioku keeps for itself (changesets, suppressions), read raw, as one text. (The
 * conversation's own transcript still holds what the user said: forgetting a fact is not forgetting the
 * session; `forgetSession` is.)
 */
async function everyKvValue(stores: ReturnType<typeof world>['stores']): Promise<string> {
  const snapshot = await stores.sessions.snapshot({ userId: alice.userId });
  return JSON.stringify(snapshot.records.filter((r) => typeof r.session.metadata.kioku === 'string'));
}

describe('a forgotten fact stays forgotten', () => {
  it('forgetFact scrubs its text from the kept changeset, and re-extraction does not store it again', async () => {
    const { stores, clock } = world();
    const session = await stores.sessions.create(alice);
    await stores.sessions.transcriptAppend(alice, session.id, [
      {
        role: 'user',
        content: 'My daughter Mia was diagnosed with leukemia in March. Can you help me plan?',
      },
      { role: 'assistant', content: 'I am so sorry. Of course, let us plan together.' },
    ]);
    const proposal = { facts: [{ turn: 0, content: SECRET, category: 'personal/family' }] };
    const changesets = new ChangesetLog(stores.sessions);
    const first = await extractSession({
      stores,
      model: new ScriptedModel([{ json: proposal }]),
      scope: alice,
      sessionId: session.id,
      changesets,
      clock,
    });
    const created = first[0]!.result!.applied[0]!;
    expect(created.op).toBe('create');
    const factId = created.op === 'create' ? created.after.id : '';
    expect(await everyKvValue(stores)).toContain('leukemia');

    await forgetFact(stores, alice, factId);

    // The log keeps the entry, says what happened, and holds none of the text.
    const kept = await changesets.list(alice);
    expect(kept).toHaveLength(1);
    expect(kept[0]!.forgotten).toEqual([{ id: factId, at: expect.any(String) }]);
    expect(JSON.stringify(kept)).not.toMatch(/leukemia|Mia/i);
    expect(await everyKvValue(stores)).not.toMatch(/leukemia/i);

    // Extraction over the same session, the model proposing the same fact again: nothing is stored.
    const again = await extractSession({
      stores,
      model: new ScriptedModel([{ json: proposal }]),
      scope: alice,
      sessionId: session.id,
      changesets,
      clock,
    });
    expect(again).toEqual([]);
    expect(await stores.facts.list(alice)).toEqual([]);
    // The suppression list holds a keyed hash, never the text; the user can see and revoke it.
    const suppressions = new SuppressionList(stores.sessions);
    const listed = await suppressions.list(alice.userId);
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toMatch(/leukemia|Mia/i);
    expect(await everyKvValue(stores)).not.toMatch(/leukemia/i);
    await suppressions.revoke(alice.userId, listed[0]!.hash);
    expect(await suppressions.list(alice.userId)).toEqual([]);
    const third = await extractSession({
      stores,
      model: new ScriptedModel([{ json: proposal }]),
      scope: alice,
      sessionId: session.id,
      changesets,
      clock,
    });
    expect(third).toHaveLength(1);
  });

  it('a paraphrase with other stop words and order is matched (analyzer terms), another fact is not', async () => {
    const { stores } = world();
    const suppressions = new SuppressionList(stores.sessions);
    await suppressions.add(
      alice.userId,
      ['The staging vault passphrase is heron-7731'],
      '2026-01-01T00:00:00.000Z',
    );
    expect(
      await suppressions.matches(alice.userId, ['staging vault passphrase: heron-7731', 'User likes tea']),
    ).toEqual([true, false]);
    expect(await suppressions.matches('bob', ['The staging vault passphrase is heron-7731'])).toEqual([
      false,
    ]);
  });

  it('a pass that proposes a forgotten fact again (the dream, a review applied later) does not write it', async () => {
    const { stores, clock } = world();
    const fact = await stores.facts.create(alice, { content: 'The staging vault passphrase is heron-7731' });
    await forgetFact(stores, alice, fact.id, { clock });
    const changesets = new ChangesetLog(stores.sessions);
    const proposal = newChangeset(
      'consolidation',
      alice,
      [
        {
          op: 'create',
          after: {
            id: 'merged1',
            content: 'Staging vault passphrase: heron-7731',
            category: 'general',
            tags: [],
            metadata: {},
            provenance: { source: 'consolidation' },
            createdAt: '2026-01-01T00:00:00.000Z',
          },
          reason: 'merge',
        },
        {
          op: 'create',
          after: {
            id: 'other1',
            content: 'User likes green tea',
            category: 'general',
            tags: [],
            metadata: {},
            provenance: { source: 'consolidation' },
            createdAt: '2026-01-01T00:00:00.000Z',
          },
          reason: 'new',
        },
      ],
      { createdAt: '2026-01-01T00:00:00.000Z' },
    );
    const { changeset, result } = await changesets.apply(stores.facts, alice, proposal);
    expect(result.applied.map((op) => op.op === 'create' && op.after.content)).toEqual([
      'User likes green tea',
    ]);
    expect(changeset.notes?.join('\n')).toMatch(/Not written: the user had forgotten it \(create merged1\)/);
    expect((await stores.facts.list(alice)).map((f) => f.content)).toEqual(['User likes green tea']);
  });
});
