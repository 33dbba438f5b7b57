import { describe, expect, it } from 'vitest';
import { dream } from '../../src/memory/dream/dream.js';
import {
  inferPreferences,
  meetsPreferenceThreshold,
  touchesSensitiveTopic,
} from '../../src/memory/dream/preferences.js';
import { alice, scriptedJsonModel, seed, world } from './harness.js';

const log = [
  { text: 'Stop using emoji!!! I told you already.' },
  { text: 'Could you maybe use metric units?' },
  { text: 'Metric please.' },
];

const candidate = (content: string, sentiment: string, occurrences: number, sensitive = false) => ({
  content,
  sentiment,
  occurrences,
  sensitive,
});

describe('dream pass 2: preference inference', () => {
  it('applies every sentiment threshold: 1 very irritated, 2 mildly frustrated, 3+ minor', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([
      {
        preferences: [
          candidate('No emoji in answers', 'very_irritated', 1),
          candidate('Shorter answers (1 mild)', 'mildly_frustrated', 1),
          candidate('Metric units', 'mildly_frustrated', 2),
          candidate('Dark mode examples (2 minor)', 'minor', 2),
          candidate('Code in TypeScript', 'minor', 3),
          candidate('Tabs over spaces', 'minor', 7),
        ],
      },
    ]);
    const result = await dream({
      stores,
      model,
      scope: alice,
      log,
      clock,
      consolidation: { enabled: false },
    });
    const stored = await stores.facts.list(alice, { order: 'oldest' });
    expect(stored.map((f) => f.content).sort()).toEqual(
      ['Code in TypeScript', 'Metric units', 'No emoji in answers', 'Tabs over spaces'].sort(),
    );
    for (const fact of stored) {
      expect(fact.category).toBe('user-preferences/inferred');
      expect(fact.tags).toEqual(['inferred']);
      expect(fact.metadata.source).toBe('inferred');
      expect(fact.metadata.requires_user_permission).toBeUndefined();
    }
    const notes = result.passes[0]!.changeset!.notes!.join('\n');
    expect(notes).toContain('Shorter answers (1 mild)');
    expect(notes).toContain('Dark mode examples (2 minor)');
    expect(meetsPreferenceThreshold('very_irritated', 1)).toBe(true);
    expect(meetsPreferenceThreshold('mildly_frustrated', 1)).toBe(false);
    expect(meetsPreferenceThreshold('mildly_frustrated', 2)).toBe(true);
    expect(meetsPreferenceThreshold('minor', 2)).toBe(false);
    expect(meetsPreferenceThreshold('minor', 3)).toBe(true);
  });

  it('marks security, credentials and money as requires_user_permission: the model flag or the keyword check', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([
      {
        preferences: [
          candidate('Confirm before acting on the shared drive', 'very_irritated', 1, true),
          candidate('Never paste passwords into chat', 'very_irritated', 1, false),
          candidate('Ask before any purchase over 20 dollars', 'very_irritated', 1, false),
          candidate('Prefers bullet lists', 'very_irritated', 1, false),
        ],
      },
    ]);
    const cs = await inferPreferences({ facts: stores.facts, model, scope: alice, log, clock });
    const flags = Object.fromEntries(
      cs.operations.map((o) => [
        o.op === 'create' ? o.after.content : '',
        o.op === 'create' ? o.after.metadata.requires_user_permission : undefined,
      ]),
    );
    expect(flags).toEqual({
      'Confirm before acting on the shared drive': 'true',
      'Never paste passwords into chat': 'true',
      'Ask before any purchase over 20 dollars': 'true',
      'Prefers bullet lists': undefined,
    });
    expect(touchesSensitiveTopic('rotate the API key monthly')).toBe(true);
    expect(touchesSensitiveTopic('prefers short answers')).toBe(false);
  });

  it('shows the model the log and the known preferences, and skips one already stored', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, [{ content: 'Metric units', category: 'user-preferences/inferred' }]);
    const model = scriptedJsonModel([{ preferences: [candidate('Metric units!', 'very_irritated', 3)] }]);
    const cs = await inferPreferences({
      facts: stores.facts,
      model,
      scope: alice,
      log,
      clock,
      directive: 'pref-dream.md text',
    });
    expect(model.prompts[0]![0]!.content.startsWith('pref-dream.md text')).toBe(true);
    const prompt = model.prompts[0]![1]!.content;
    expect(prompt).toContain('1. Stop using emoji!!! I told you already.');
    expect(prompt).toContain('3. Metric please.');
    expect(prompt).toContain('- Metric units');
    expect(cs.operations).toEqual([]);
    expect(cs.notes).toEqual(['Already known: Metric units!']);
  });

  it('an empty log asks the model nothing', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([]);
    const cs = await inferPreferences({ facts: stores.facts, model, scope: alice, log: [], clock });
    expect(cs.operations).toEqual([]);
    expect(model.prompts).toEqual([]);
  });

  it('the log is cleared after the pass even when the model fails, and nothing is written', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel(['not json', { preferences: [{ content: 'x', sentiment: 'furious' }] }]);
    let cleared = 0;
    const result = await dream({
      stores,
      model,
      scope: alice,
      log,
      clock,
      consolidation: { enabled: false },
      clearLog: () => {
        cleared++;
      },
    });
    expect(result.passes[0]!.error!.code).toBe('MODEL_OUTPUT');
    expect(cleared).toBe(1);
    expect(await stores.facts.count(alice)).toBe(0);
  });

  it('a dry run neither writes nor clears the log', async () => {
    const { stores, clock } = world();
    const model = scriptedJsonModel([{ preferences: [candidate('No emoji', 'very_irritated', 1)] }]);
    let cleared = 0;
    const result = await dream({
      stores,
      model,
      scope: alice,
      log,
      clock,
      dryRun: true,
      consolidation: { enabled: false },
      clearLog: () => {
        cleared++;
      },
    });
    expect(result.passes[0]!.changeset!.operations).toHaveLength(1);
    expect(cleared).toBe(0);
    expect(await stores.facts.count(alice)).toBe(0);
  });

  it('each pass can have its own model', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['A fact']);
    const big = scriptedJsonModel([]);
    const cheap1 = scriptedJsonModel([{}]);
    const cheap2 = scriptedJsonModel([{ preferences: [] }]);
    const result = await dream({
      stores,
      model: big,
      scope: alice,
      log,
      clock,
      consolidation: { model: cheap1 },
      preferences: { model: cheap2 },
    });
    expect(result.passes.map((p) => p.pass)).toEqual(['consolidation', 'preferences']);
    expect(big.prompts).toHaveLength(0);
    expect(cheap1.prompts).toHaveLength(1);
    expect(cheap2.prompts).toHaveLength(1);
    expect(result.usage.entries.map((e) => e.label)).toEqual(['dream:consolidation', 'dream:preferences']);
  });
});
