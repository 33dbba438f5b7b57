import { describe, expect, it } from 'vitest';
import { KiokuBuilder } from '../src/index.js';
import { InMemoryPlanStore } from '../src/store/plans/memory.js';
import { bundleWith } from './bundle.js';

const planText = (messages: { content: string }[]) =>
  messages.map((m) => m.content).find((c) => c.startsWith('[CURRENT_PLAN]'));

describe('the plan block', () => {
  it('shows an edit made between two turns, and the same block while the plan is unchanged', async () => {
    const plans = new InMemoryPlanStore();
    const kioku = new KiokuBuilder({ stores: bundleWith({ plans }), budget: { maxTokens: 4000 } })
      .withPlanMode()
      .build();
    const convo = await kioku.startConversation({ userId: 'ann' });
    const plan = await plans.create(convo.scope, { goal: 'Plan a trip', steps: ['Pick dates', 'Book'] });

    const first = planText((await convo.prepare('What is next?')).messages);
    expect(first).toContain('Pick dates');
    await convo.record([
      { role: 'user', content: 'What is next?' },
      { role: 'assistant', content: 'Pick dates.' },
    ]);
    expect(planText((await convo.prepare('And then?')).messages)).toBe(first);

    await plans.updateStep(convo.scope, plan.steps[0]!.id, { status: 'completed', notes: 'June 3–10' });
    const edited = (await convo.prepare('And now?')).messages;
    expect(planText(edited)).not.toBe(first);
    expect(planText(edited)).toContain('June 3–10');
  });
});
