import { describe, expect, it } from 'vitest';
import { defaultTokenizer, KiokuBuilder } from '../src/index.js';
import { countMessagesTokens } from '../src/model/messages.js';
import { InMemoryFactStore } from '../src/store/facts/memory.js';
import { InMemoryPlanStore } from '../src/store/plans/memory.js';
import { RecallFactStore } from '../src/store/recall/facts.js';
import { InMemorySessionStore } from '../src/store/sessions/memory.js';
import { InMemoryWorkingMemoryStore } from '../src/store/working/memory.js';
import { bundleWith } from './bundle.js';

describe('KiokuBuilder with* helpers', () => {
  it('wires every feature in registration order under one budget', async () => {
    const facts = new InMemoryFactStore();
    const plans = new InMemoryPlanStore();
    const working = new InMemoryWorkingMemoryStore();
    const sessions = new InMemorySessionStore();
    const kioku = new KiokuBuilder({
      stores: bundleWith({ sessions, facts, plans, working }),
      systemPrompt: 'You are Kioku’s demo agent.',
      budget: { maxTokens: 4000 },
    })
      .withFacts()
      .withPlanMode()
      .withMemory()
      .withToolOutputOffload()
      .build();
    await facts.create(
      { userId: 'ann' },
      { content: 'Ann lives in Lisbon', category: 'user-preferences/location' },
    );
    const convo = await kioku.startConversation({ userId: 'ann' });
    await plans.create(convo.scope, { goal: 'Plan a trip', steps: ['Pick dates'] });
    await working.set(convo.scope, `session/${convo.sessionId}/flights`, 'three options', { ttlMs: 60_000 });

    const turn = await convo.prepare('Where do I live?');
    expect(turn.ledger.entries.map((e) => e.middleware)).toEqual([
      'facts',
      'plan',
      'fact-recall',
      'working-memory',
      'conversation',
    ]);
    const text = turn.messages.map((m) => m.content).join('\n');
    expect(text).toContain('[DYNAMIC_MEMORY]');
    expect(text).toContain('[CURRENT_PLAN]');
    // The one fact is in the every-fact block, so recall leaves it out rather than repeat it.
    expect(text.split('Ann lives in Lisbon')).toHaveLength(2);
    expect(turn.ledger.entries.find((e) => e.middleware === 'fact-recall')?.dropped).toEqual([
      expect.objectContaining({ reason: 'already-injected' }),
    ]);
    expect(text).toContain(`session/${convo.sessionId}/flights`);
    expect(text).not.toContain('three options');
    expect(turn.ledger.totalTokens).toBe(
      countMessagesTokens(defaultTokenizer, turn.messages) + turn.ledger.tools.tokens,
    );
    expect(turn.ledger.totalTokens).toBeLessThanOrEqual(4000);
    // delete_memory is offered once although two features use it.
    const names = turn.tools.map((t) => t.function.name);
    expect(names.filter((n) => n === 'delete_memory')).toHaveLength(1);
    expect(names).toEqual(
      expect.arrayContaining(['create_plan', 'save_memory', 'retrieve_memory', 'save_to_working_memory']),
    );
  });
});

describe('KiokuBuilder: recall signals', () => {
  it("wires recall's signals over the bundle's fact search by default, and not with `recallSignals: false`", () => {
    const facts = new InMemoryFactStore();
    const ranked = new KiokuBuilder({ stores: bundleWith({ facts }) }).build().stores.facts;
    const plain = new KiokuBuilder({ stores: bundleWith({ facts }), recallSignals: false }).build().stores
      .facts;
    expect(ranked).toBeInstanceOf(RecallFactStore);
    // The bundle's own store, behind the wrapper that honours a turn's AbortSignal.
    expect(plain).not.toBeInstanceOf(RecallFactStore);
    expect(plain).toBeInstanceOf(InMemoryFactStore);
  });
});
