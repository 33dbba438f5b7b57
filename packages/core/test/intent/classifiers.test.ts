import { describe, expect, it } from 'vitest';
import { type ChatMessage, type ChatModel, modelIntentClassifier } from '../../src/index.js';
import { classifyIntent, deterministicIntent } from '../../src/runtime/intent/deterministic.js';
import { scriptedJsonModel } from '../lifecycle/harness.js';

const said = (content: string): ChatMessage[] => [
  { role: 'user', content },
  { role: 'assistant', content: 'Noted.' },
];

describe('classifyIntent (deterministic)', () => {
  it.each([
    'Connect to the DB',
    'Send that report to Bob',
    'Fix it',
    'Do it again',
    'Deploy',
    'Use the same settings as last time',
    "What's my favourite colour?",
    'Where do I live?',
    'Do you remember what we decided about the logo?',
    'When did Caroline go to the LGBTQ support group?',
    "How did Caroline's son handle the accident?",
    'What is the general sentiment about the upcoming grand opening?',
    'Order my usual',
  ])('calls "%s" ambiguous', (message) => {
    const verdict = classifyIntent(message);
    expect(verdict.intent).toBe('ambiguous');
    expect(verdict.cues.length).toBeGreaterThan(0);
    expect(verdict.reason).toMatch(/^Ambiguous: /);
  });

  it.each([
    'Translate "good night" into French.',
    'Summarize this report: sales went up 5% in March while costs stayed flat.',
    'Proofread my paragraph: Their going too the park tomorow.',
    'Write a haiku about autumn leaves.',
    'What is the capital of Australia?',
    'How do I reverse a list in Python?',
    'Convert 72 degrees Fahrenheit to Celsius.',
    'Explain quantum computing and why it matters.',
    'Find the bug in this function: def add(a, b): return a - b',
  ])('calls "%s" concrete', (message) => {
    expect(classifyIntent(message)).toMatchObject({ intent: 'concrete', cues: [] });
  });

  it('resolves a reference the context holds (a synonym counts)', () => {
    expect(classifyIntent('Connect to the DB').intent).toBe('ambiguous');
    expect(classifyIntent('Connect to the DB', said('The database is Postgres on db.internal.')).intent).toBe(
      'concrete',
    );
    expect(classifyIntent('What did Caroline say?', said('Caroline said she moved to Lisbon.')).intent).toBe(
      'concrete',
    );
    expect(classifyIntent('Do it again', said('Run the tests.')).intent).toBe('concrete');
    // "Last time" points beyond the replayed turns whatever they hold.
    expect(classifyIntent('Book it like last time', said('Book a table.')).intent).toBe('ambiguous');
  });

  it('is an IntentClassifier named deterministic', async () => {
    const c = await deterministicIntent().classify({ userMessage: 'Connect to the DB', context: [] });
    expect(c).toMatchObject({ by: 'deterministic', intent: 'ambiguous' });
    expect(c.fallback).toBeUndefined();
  });
});

describe('modelIntentClassifier', () => {
  it("decides with the model's structured answer and counts its tokens", async () => {
    const model = scriptedJsonModel([
      { intent: 'concrete', reason: 'The database was named just before.', unresolved: [] },
    ]);
    const c = await modelIntentClassifier({ model }).classify({
      userMessage: 'Connect to the DB',
      context: said('Use the AgentFusion database.'),
    });
    expect(c).toEqual({
      intent: 'concrete',
      reason: 'Concrete: The database was named just before.',
      cues: [],
      by: 'model',
      usage: { inputTokens: 100, outputTokens: 10 },
    });
    // The model saw the context and the new message.
    const prompt = model.prompts[0]!.map((m) => m.content).join('\n');
    expect(prompt).toContain('user: Use the AgentFusion database.');
    expect(prompt).toContain('New message:\nConnect to the DB');
  });

  it('falls back to the deterministic classifier on malformed output, and reports it', async () => {
    const model = scriptedJsonModel(['not json at all', { intent: 'maybe' }]);
    const c = await modelIntentClassifier({ model }).classify({
      userMessage: 'Connect to the DB',
      context: [],
    });
    expect(c).toMatchObject({
      intent: 'ambiguous',
      by: 'deterministic',
      cues: ['"the db" is not in the context'],
      fallback: { from: 'model', code: 'MODEL_OUTPUT' },
      // Both attempts were paid for.
      usage: { inputTokens: 200, outputTokens: 20 },
    });
    expect(model.prompts).toHaveLength(2);
  });

  it('falls back when the model fails or does not answer in time', async () => {
    const failing: ChatModel = {
      async complete() {
        throw Object.assign(new Error('503 Service Unavailable'), { code: 'UPSTREAM' });
      },
    };
    const failed = await modelIntentClassifier({ model: failing }).classify({
      userMessage: 'Write a haiku about tea.',
      context: [],
    });
    expect(failed).toMatchObject({
      intent: 'concrete',
      by: 'deterministic',
      fallback: { from: 'model', code: 'UPSTREAM', message: '503 Service Unavailable' },
    });

    let aborted = false;
    const hanging: ChatModel = {
      complete: ({ signal }) =>
        new Promise((_, reject) => {
          signal?.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason);
          });
        }),
    };
    const late = await modelIntentClassifier({ model: hanging, timeoutMs: 20 }).classify({
      userMessage: 'Connect to the DB',
      context: [],
    });
    expect(late).toMatchObject({ by: 'deterministic', fallback: { from: 'model', code: 'TIMEOUT' } });
    expect(aborted).toBe(true);
  });

  it("stops when the turn's own signal aborts (that is not the model's failure)", async () => {
    const controller = new AbortController();
    const model: ChatModel = {
      complete: ({ signal }) =>
        new Promise((_, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason));
          controller.abort(new Error('user cancelled'));
        }),
    };
    await expect(
      modelIntentClassifier({ model }).classify({
        userMessage: 'Connect to the DB',
        context: [],
        signal: controller.signal,
      }),
    ).rejects.toThrow('user cancelled');
  });
});
