import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createInMemoryStores,
  defaultTokenizer,
  defineTool,
  HashingEmbedder,
  KiokuBuilder,
} from '../src/index.js';
import { countMessagesTokens } from '../src/model/messages.js';
import {
  answer,
  callTools,
  scriptedModel as scripted,
  toolResults,
} from './features/memory-features.harness.js';

const ann = { userId: 'ann', agentId: 'assistant' };

/** A tool whose output is large enough to be offloaded behind a MemoryRef. */
const readLog = defineTool({
  name: 'read_log',
  description: 'Read the build log.',
  parameters: z.object({}),
  execute: () =>
    Array.from({ length: 120 }, (_, i) => `step ${i}: compiled module-${i} in ${i * 3} ms`).join('\n') +
    '\nFAILED: module-77 could not resolve "left-pad"',
});

describe('every feature at once, with embeddings on, in one conversation', () => {
  it('wires every store from one bundle, keeps one delete_memory, searches by vector, stays in budget', async () => {
    const stores = createInMemoryStores();
    const maxTokens = 6_000;
    const kioku = new KiokuBuilder({
      stores,
      embeddings: new HashingEmbedder({ dimensions: 128 }),
      systemPrompt: 'You are Ann’s assistant.',
      budget: { maxTokens },
    })
      .withFacts()
      .withKnowledge({ strategy: 'indexed', topK: 2 })
      .withPlanMode()
      .withMemory()
      .withToolOutputOffload({ thresholdTokens: 200 })
      .withFacts({ mode: 'relevant', autoStore: false })
      .use({ name: 'build-tools', toolkit: { name: 'build', tools: [readLog] } })
      .build();
    // The builder wrapped the bundle once: every feature reads these stores, with vectors.
    expect(kioku.stores.vectors).toBeDefined();
    await kioku.stores.documents.create(ann, {
      title: 'Helix keymap',
      text: 'In the Helix editor, space-f opens the file picker and gd jumps to a definition.',
    });

    const convo = await kioku.startConversation(ann);
    const names = convo.tools.map((t) => t.function.name);
    expect(names.filter((n) => n === 'delete_memory')).toHaveLength(1);
    expect(names).toEqual(
      expect.arrayContaining([
        'create_memory',
        'save_memory',
        'search_memory',
        'create_plan',
        'save_to_working_memory',
        'retrieve_memory',
        'read_log',
      ]),
    );

    const first = await convo.run(
      'I use the Helix editor. Plan the build fix and look at the log.',
      scripted([
        callTools(
          ['create_memory', { title: 'Editor', content: 'Ann edits code in Helix' }],
          ['create_plan', { goal: 'Fix the build', steps: ['Read the log', 'Pin left-pad'] }],
          ['save_to_working_memory', { key: 'build_status', data: 'module-77 fails' }],
          ['read_log', {}],
        ),
        answer('The build fails on left-pad; plan created.'),
      ]),
    );
    const results = toolResults(first.messages);
    expect(results.every((r) => 'ok' in r)).toBe(true);
    const logResult = first.messages.filter((m) => m.role === 'tool').at(-1)!.content;
    const ref = /\[MemoryRef: ([^ ]+) /.exec(logResult)?.[1];
    expect(ref).toBeDefined();

    // Second turn: a misspelt question the word search cannot match; the vector side finds the fact.
    const model = scripted([
      callTools(['search_memory', { query: 'editr' }], ['retrieve_memory', { id: ref }]),
      answer('Helix.'),
    ]);
    const second = await convo.run('Which editr do I use, and which keys open its file picker?', model);
    const prompt = model.prompts[0]!.map((m) => m.content).join('\n');
    expect(prompt).toContain('[DYNAMIC_MEMORY]');
    expect(prompt.split('Ann edits code in Helix')).toHaveLength(2); // shown once, not by two features
    expect(prompt).toContain('[CURRENT_PLAN]');
    expect(prompt).toContain('Fix the build');
    expect(prompt).toContain('build_status');
    expect(prompt).toContain('[MemoryRef:'); // the replayed first turn keeps the placeholder
    expect(prompt).toContain('space-f opens the file picker'); // the knowledge chunk

    const [search, retrieve] = toolResults(second.messages) as Array<{ ok: string }>;
    expect(search!.ok).toContain('Ann edits code in Helix');
    expect(retrieve!.ok).toContain('FAILED: module-77');

    // The budget covers the whole prompt: messages plus tool definitions.
    const ledger = second.ledger;
    expect(ledger.totalTokens).toBe(
      countMessagesTokens(defaultTokenizer, model.prompts[0]!) + ledger.tools.tokens,
    );
    expect(ledger.totalTokens).toBeLessThanOrEqual(maxTokens);
    expect(ledger.entries.map((e) => e.middleware)).toEqual([
      'facts',
      'knowledge',
      'plan',
      'fact-recall',
      'working-memory',
      'conversation',
      'relevant-memory',
    ]);

    // Vectors were written for facts, documents and details through the one index.
    const vectors = kioku.stores.vectors!;
    expect(await vectors.count(ann, { kind: 'facts' })).toBe(1);
    expect(await vectors.count(ann, { kind: 'documents' })).toBeGreaterThan(0);
    // Details belong to the user (the agent is a filter on them), so their vectors are the user's.
    expect(await vectors.count({ userId: ann.userId }, { kind: 'details' })).toBe(1);
  });
});
