import { describe, expect, it } from 'vitest';
import { isKiokuError, KiokuBuilder } from '../../src/index.js';
import { dream } from '../../src/memory/dream/dream.js';
import { FEEDBACK_LIMITS, FeedbackLog, recordFeedback } from '../../src/memory/feedback/feedback-log.js';
import { answer, callTools, scriptedModel, toolResults } from '../features/memory-features.harness.js';
import { alice, bob, DAY, scriptedJsonModel, seed, world } from './harness.js';

async function rejected(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.catch((e: unknown) => e);
  return isKiokuError(error) ? error.code : undefined;
}

describe('feedback signals: durable per user, bounded, with time', () => {
  it('records a signal stamped now, per user, and lists them oldest first', async () => {
    const { stores, clock } = world();
    const a = await recordFeedback(stores, alice, { kind: 'correction', text: '  Use grep.  ' }, { clock });
    clock.advance(1000);
    await recordFeedback(stores, alice, { kind: 'positive', text: 'Great summary.' }, { clock });
    expect(a).toMatchObject({
      kind: 'correction',
      text: 'Use grep.',
      at: new Date(clock.now() - 1000).toISOString(),
    });
    const log = new FeedbackLog(stores.sessions, { clock });
    expect((await log.list(alice)).map((f) => f.text)).toEqual(['Use grep.', 'Great summary.']);
    expect(await log.list(bob)).toEqual([]);
  });

  it('refuses a bad kind, an empty or too long text, text outside the domain, unknown fields — and stores nothing', async () => {
    const { stores } = world();
    const bad = [
      { kind: 'furious', text: 'x' },
      { kind: 'negative', text: '   ' },
      { kind: 'negative', text: 'x'.repeat(FEEDBACK_LIMITS.textChars + 1) },
      { kind: 'negative', text: 'lone \uD800 surrogate' },
      { kind: 'negative', text: 'ok', userId: 'mallory' },
      { kind: 'negative', text: 'ok', sessionId: 'not-a-session' },
    ];
    for (const input of bad) {
      // biome-ignore lint/suspicious/noExplicitAny: the point is input the types forbid
      expect(await rejected(recordFeedback(stores, alice, input as any)), JSON.stringify(input)).toBe(
        'VALIDATION',
      );
    }
    expect(await new FeedbackLog(stores.sessions).list(alice)).toEqual([]);
    expect(await rejected(recordFeedback(stores, { userId: '' }, { kind: 'positive', text: 'x' }))).toBe(
      'VALIDATION',
    );
  });

  it('keeps at most maxSignals: the oldest is dropped first', async () => {
    const { stores, clock } = world();
    const log = new FeedbackLog(stores.sessions, { clock, maxSignals: 3 });
    for (let i = 0; i < 5; i++) await log.record(alice, { kind: 'negative', text: `signal ${i}` });
    expect((await log.list(alice)).map((f) => f.text)).toEqual(['signal 2', 'signal 3', 'signal 4']);
  });

  it('the dream reads the user’s feedback itself: the last 7 days, and learns anti-patterns from corrections', async () => {
    const { stores, clock } = world();
    await recordFeedback(stores, alice, { kind: 'correction', text: 'Old correction.' }, { clock });
    clock.advance(10 * DAY);
    await seed(stores, clock, alice, ['A fact']);
    await recordFeedback(
      stores,
      alice,
      { kind: 'correction', text: 'Use grep, not search_files.' },
      { clock },
    );
    await recordFeedback(stores, bob, { kind: 'correction', text: 'Bob’s correction.' }, { clock });
    const model = scriptedJsonModel([
      {
        antiPatterns: [
          { domain: 'file-operations', content: "Don't use search_files for content — use grep." },
        ],
      },
    ]);
    const kioku = new KiokuBuilder({ stores, model, clock }).build();
    const result = await kioku.passes.dream({ scope: alice, preferences: { enabled: false } });
    const prompt = model.prompts[0]![1]!.content;
    expect(prompt).toContain('correction: Use grep, not search_files.');
    expect(prompt).not.toContain('Old correction.');
    expect(prompt).not.toContain('Bob');
    expect(result.passes[0]!.result!.applied).toHaveLength(1);
    expect((await stores.facts.list(alice, { category: 'anti-patterns' })).map((f) => f.tags)).toEqual([
      ['anti-pattern'],
    ]);
  });
});

describe('record_feedback for the model, recordFeedback for apps', () => {
  it('the tool records for the conversation’s user and session, whatever the arguments say', async () => {
    const { stores, clock } = world();
    const kioku = new KiokuBuilder({ stores, clock }).withFeedback().build();
    const convo = await kioku.startConversation(alice);
    expect(convo.tools.map((t) => t.function.name)).toContain('record_feedback');
    const turn = await convo.run(
      'No, I told you to use grep!',
      scriptedModel([
        callTools([
          'record_feedback',
          { kind: 'correction', text: 'Used search_files; the user wants grep.', userId: 'bob' },
        ]),
        callTools(['record_feedback', { kind: 'praise', text: 'x' }]),
        answer('Sorry — grep from now on.'),
      ]),
    );
    expect(toolResults(turn.messages)).toEqual([
      { ok: 'Recorded correction feedback.' },
      { error: 'VALIDATION' },
    ]);
    const [signal] = await new FeedbackLog(stores.sessions).list(alice);
    expect(signal).toMatchObject({
      kind: 'correction',
      text: 'Used search_files; the user wants grep.',
      sessionId: convo.sessionId,
    });
    expect(await new FeedbackLog(stores.sessions).list(bob)).toEqual([]);
  });

  it('kioku.recordFeedback records an app’s signal (a thumbs-down button)', async () => {
    const { stores, clock } = world();
    const kioku = new KiokuBuilder({ stores, clock }).build();
    const convo = await kioku.startConversation(alice);
    const signal = await kioku.recordFeedback(alice, {
      kind: 'negative',
      text: 'Thumbs down on the last answer.',
      sessionId: convo.sessionId,
    });
    expect(signal.at).toBe(new Date(clock.now()).toISOString());
    expect(await new FeedbackLog(stores.sessions).list(alice)).toEqual([signal]);
    expect(await rejected(kioku.recordFeedback(alice, { kind: 'negative', text: '' }))).toBe('VALIDATION');
  });
});

describe('dream progress', () => {
  it('tells each stage of each pass, and a listener that throws breaks nothing', async () => {
    const { stores, clock } = world();
    const [a, b] = await seed(stores, clock, alice, ['Tea', 'Green tea']);
    const events: unknown[] = [];
    const result = await dream({
      stores,
      model: scriptedJsonModel([
        { merges: [{ sourceIds: [a!.id, b!.id], content: 'Green tea', category: 'drinks', tags: [] }] },
        'not json',
        'not json',
      ]),
      scope: alice,
      clock,
      log: [{ text: 'Metric please.' }],
      onProgress: (event) => {
        events.push(event);
        throw new Error('display crashed');
      },
    });
    expect(result.passes[0]!.result!.conflicts).toEqual([]);
    expect(events).toEqual([
      { pass: 'consolidation', stage: 'reading' },
      { pass: 'consolidation', stage: 'model', facts: 2, feedback: 0 },
      { pass: 'consolidation', stage: 'applying', operations: 3 },
      { pass: 'consolidation', stage: 'done', operations: 3, applied: 3, conflicts: 0 },
      { pass: 'preferences', stage: 'reading' },
      { pass: 'preferences', stage: 'model', entries: 1 },
      { pass: 'preferences', stage: 'done', error: 'MODEL_OUTPUT' },
    ]);
  });
});
