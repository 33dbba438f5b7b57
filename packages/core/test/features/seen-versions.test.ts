import { describe, expect, it } from 'vitest';
import { type ChatMessage, type ChatModel, KiokuBuilder } from '../../src/index.js';
import { allFacts } from '../../src/memory/facts/all/feature.js';
import { factRecall } from '../../src/memory/facts/recall/feature.js';
import { InMemoryFactStore } from '../../src/store/facts/memory.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { bundleWith } from '../bundle.js';
import { answer, callTools, toolResults } from './memory-features.harness.js';

const alice = { userId: 'alice' };

/** A model that lets `meanwhile` run (another writer) before each scripted reply. */
function racingModel(replies: ChatMessage[], meanwhile: (step: number) => Promise<void>): ChatModel {
  let step = 0;
  return {
    async complete() {
      await meanwhile(step++);
      const reply = replies.shift();
      if (!reply) throw new Error('model script exhausted');
      return reply;
    },
  };
}

function setup() {
  const facts = new InMemoryFactStore();
  const sessions = new InMemorySessionStore();
  const kioku = new KiokuBuilder({ stores: bundleWith({ sessions }), budget: { maxTokens: 16_000 } })
    .use(allFacts({ store: facts }))
    .use(factRecall({ store: facts, sessions }))
    .build();
  return { facts, kioku };
}

describe('the model’s edits are checked against the version it was shown', () => {
  it('update_memory of a fact changed since the prompt is CONFLICT, keeps the other change and shows it', async () => {
    const { facts, kioku } = setup();
    const fact = await facts.create(alice, { title: 'Diet', content: 'Vegetarian' });
    const convo = await kioku.startConversation(alice);
    const model = racingModel(
      [
        callTools(['update_memory', { id: fact.id, content: 'Vegetarian, likes cheese' }]),
        // Told what the fact says now, the model retries with its change applied to it.
        callTools(['update_memory', { id: fact.id, content: 'Vegan since 2024, likes cheese' }]),
        answer(),
      ],
      async (step) => {
        // Another app instance (or a background pass) edits the fact after the prompt was built.
        if (step === 0) await facts.update(alice, fact.id, { content: 'Vegan since 2024' });
      },
    );
    const result = await convo.run('Note that I like cheese', model);
    expect(toolResults(result.messages)).toEqual([
      { error: 'CONFLICT' },
      { ok: `Updated memory ${fact.id}.` },
    ]);
    const conflict = result.messages.find((m) => m.role === 'tool')!.content;
    expect(conflict).toContain('Vegan since 2024');
    expect(await facts.get(alice, fact.id)).toMatchObject({
      content: 'Vegan since 2024, likes cheese',
      version: 3,
    });
  });

  it('delete_memory of a fact changed since the model saw it is CONFLICT and deletes nothing', async () => {
    const { facts, kioku } = setup();
    const fact = await facts.create(alice, { content: 'Works at Acme' });
    const convo = await kioku.startConversation(alice);
    const model = racingModel([callTools(['delete_memory', { id: fact.id }]), answer()], async (step) => {
      if (step === 0) await facts.update(alice, fact.id, { content: 'Works at Acme, team lead since May' });
    });
    const result = await convo.run('Forget where I work', model);
    expect(toolResults(result.messages)).toEqual([{ error: 'CONFLICT' }]);
    expect((await facts.get(alice, fact.id))?.content).toBe('Works at Acme, team lead since May');
  });

  it('a fact found by search_memory is checked against the version the search returned', async () => {
    const { facts, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    const model = racingModel(
      [
        callTools(['search_memory', { query: 'espresso' }]),
        callTools(['update_memory', { id: 'espresso1', content: 'Drinks two espressos a day' }]),
        answer(),
      ],
      async (step) => {
        // Created after the prompt was built: the model only sees it through search_memory.
        if (step === 0) await facts.create(alice, { id: 'espresso1', content: 'Drinks espresso' });
        if (step === 1) await facts.update(alice, 'espresso1', { content: 'Quit coffee in March' });
      },
    );
    const result = await convo.run('How much coffee do I drink?', model);
    expect(toolResults(result.messages).map((r) => ('error' in r ? r.error : 'ok'))).toEqual([
      'ok',
      'CONFLICT',
    ]);
    expect((await facts.get(alice, 'espresso1'))?.content).toBe('Quit coffee in March');
  });

  it('a fact deleted meanwhile is NOT_FOUND; a fact the model never saw is edited without a check', async () => {
    const { facts, kioku } = setup();
    const gone = await facts.create(alice, { content: 'Temporary note' });
    const convo = await kioku.startConversation(alice);
    const model = racingModel(
      [
        callTools(
          ['update_memory', { id: gone.id, content: 'edited' }],
          ['update_memory', { id: 'unseen1', content: 'edited' }],
        ),
        answer(),
      ],
      async (step) => {
        if (step !== 0) return;
        await facts.delete(alice, gone.id);
        await facts.create(alice, { id: 'unseen1', content: 'never shown' });
        await facts.update(alice, 'unseen1', { content: 'changed twice' });
      },
    );
    const result = await convo.run('edit', model);
    expect(toolResults(result.messages)).toEqual([{ error: 'NOT_FOUND' }, { ok: 'Updated memory unseen1.' }]);
    expect(await facts.get(alice, 'unseen1')).toMatchObject({ content: 'edited', version: 3 });
  });
});
