import { describe, expect, it } from 'vitest';
import { type ChatModel, defaultTokenizer, KiokuBuilder, type Plan, planMode } from '../../src/index.js';
import { renderPlan } from '../../src/memory/plans/format.js';
import { countMessageTokens } from '../../src/model/messages.js';
import { InMemoryPlanStore } from '../../src/store/plans/memory.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { ManualClock } from '../../src/testing.js';
import { bundleWith } from '../bundle.js';
import {
  answer,
  callTools,
  entryOf,
  expectLedgerAddsUp,
  injected,
  scriptedModel,
  toolResults,
} from './memory-features.harness.js';

const alice = { userId: 'alice' };
const bob = { userId: 'bob' };
const at = (hh: number, mm: number, ss = 0) => Date.UTC(2025, 0, 15, hh, mm, ss);

function setup(options: { share?: number; maxTokens?: number } = {}) {
  const clock = new ManualClock(at(10, 0));
  const plans = new InMemoryPlanStore({ clock });
  const sessions = new InMemorySessionStore({ clock });
  const maxTokens = options.maxTokens ?? 16_000;
  const kioku = new KiokuBuilder({
    stores: bundleWith({ sessions }),
    systemPrompt: 'You are helpful.',
    budget: { maxTokens, ...(options.share === undefined ? {} : { shares: { plan: options.share } }) },
    clock,
  })
    .use(planMode({ store: plans }))
    .build();
  return { clock, plans, sessions, kioku, maxTokens };
}

const blockTokens = (plan: Plan) =>
  countMessageTokens(defaultTokenizer, { role: 'system', content: renderPlan(plan) });

describe('planMode — the [CURRENT_PLAN] block', () => {
  it('injects nothing while the conversation has no plan', async () => {
    const { kioku } = setup();
    const turn = await (await kioku.startConversation(alice)).prepare('hi');
    expect(turn.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(entryOf(turn, 'plan')).toMatchObject({ tokens: 0, included: 0, dropped: [] });
  });

  it('shows the [CURRENT_PLAN] block exactly, built through the tools, times in UTC', async () => {
    const { clock, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    const created = await convo.run(
      'Help me build an online store',
      scriptedModel([
        callTools([
          'create_plan',
          {
            goal: 'Build an online store website',
            steps: ['Define requirements', 'Choose tech stack', 'Design UI/UX'],
          },
        ]),
        answer('Plan made.'),
      ]),
    );
    const planId = /Created plan (plan-[0-9a-f]+)/.exec(
      created.messages.find((m) => m.role === 'tool')!.content,
    )?.[1];
    expect(toolResults(created.messages)).toEqual([
      {
        ok: `Created plan ${planId} with 3 steps.\n  [1] Define requirements\n  [2] Choose tech stack\n  [3] Design UI/UX`,
      },
    ]);

    clock.set(at(10, 30));
    const progress = await convo.run(
      'Requirements are done',
      scriptedModel([
        callTools(
          ['update_plan_step', { step_id: '1', status: 'completed', notes: 'React, Node.js, PostgreSQL' }],
          ['update_plan_step', { step_id: 2, status: 'in_progress' }],
        ),
        answer(),
      ]),
    );
    expect(toolResults(progress.messages)).toEqual([
      { ok: 'Step 1 (Define requirements) is now Completed.' },
      { ok: 'Step 2 (Choose tech stack) is now InProgress.' },
    ]);

    clock.set(at(10, 32, 15));
    const noted = await convo.run(
      'We take payments with Stripe',
      scriptedModel([
        callTools(['add_context_note', { note: 'Need to integrate Stripe for payments' }]),
        answer(),
      ]),
    );
    expect(toolResults(noted.messages)).toEqual([{ ok: 'Added context note [10:32:15].' }]);

    const turn = await convo.prepare('What next?');
    expect(turn.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(turn.messages[1]!.content).toBe(
      [
        '[CURRENT_PLAN]',
        'Goal: Build an online store website',
        `Plan ID: ${planId}`,
        'Created: 2025-01-15 10:00:00',
        'Status: In Progress',
        '',
        'Steps:',
        '  ● [1] Define requirements (Completed)',
        '      Notes: React, Node.js, PostgreSQL',
        '  ◐ [2] Choose tech stack (InProgress)',
        '  ○ [3] Design UI/UX (Pending)',
        '',
        'Context Notes:',
        '  • [10:32:15] Need to integrate Stripe for payments',
        '',
        '[END_CURRENT_PLAN]',
      ].join('\n'),
    );
    expect(entryOf(turn, 'plan')).toMatchObject({ included: 1, dropped: [] });
    expectLedgerAddsUp(turn, 16_000);
  });

  it('marks blocked and skipped steps, inserts steps, and shows a completed plan as Completed', async () => {
    const { plans, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    const scope = { ...alice, threadId: convo.sessionId };
    await plans.create(scope, { goal: 'Ship v1', steps: ['Write code', 'Get review', 'Write docs'] });
    const result = await convo.run(
      'go',
      scriptedModel([
        callTools(
          ['update_plan_step', { step_id: '1', status: 'completed' }],
          ['update_plan_step', { step_id: '2', status: 'blocked', notes: 'Reviewer on leave' }],
          ['update_plan_step', { step_id: '3', status: 'skipped' }],
          ['add_plan_step', { description: 'Fix lint', after_step_id: 1 }],
          ['complete_plan', {}],
        ),
        answer(),
      ]),
    );
    const plan = (await plans.get(scope))!;
    expect(toolResults(result.messages).slice(3)).toEqual([
      { ok: 'Added step 4: Fix lint' },
      { ok: `Completed plan ${plan.id}: Ship v1 (2 steps were not completed)` },
    ]);
    const block = injected(await convo.prepare('status?'))[0]!;
    expect(block).toContain('Status: Completed\n');
    expect(block).toContain(
      [
        'Steps:',
        '  ● [1] Write code (Completed)',
        '  ○ [4] Fix lint (Pending)',
        '  ⊘ [2] Get review (Blocked)',
        '      Notes: Reviewer on leave',
        '  ⊖ [3] Write docs (Skipped)',
        '',
        '[END_CURRENT_PLAN]',
      ].join('\n'),
    );
    expect(block).not.toContain('Context Notes:');
  });

  it('belongs to its thread: other sessions and other users never see it', async () => {
    const { plans, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    await plans.create(
      { ...alice, threadId: convo.sessionId },
      { goal: 'Alice’s secret plan', steps: ['a'] },
    );
    const resumed = await kioku.resumeConversation(alice, convo.sessionId);
    expect(injected(await resumed.prepare('hi'))[0]).toContain('Alice’s secret plan');
    const otherSession = await kioku.startConversation(alice);
    expect(injected(await otherSession.prepare('hi'))).toEqual([]);
    const bobs = await kioku.startConversation(bob);
    expect(injected(await bobs.prepare('hi'))).toEqual([]);
    // Bob's tools act on Bob's (absent) plan, never on Alice's.
    const result = await bobs.run(
      'complete it',
      scriptedModel([
        callTools(['complete_plan', {}], ['update_plan_step', { step_id: '1', status: 'completed' }]),
        answer(),
      ]),
    );
    expect(toolResults(result.messages)).toEqual([{ error: 'NOT_FOUND' }, { error: 'NOT_FOUND' }]);
    expect((await plans.get({ ...alice, threadId: convo.sessionId }))!.isComplete).toBe(false);
  });
});

describe('planMode — token budget', () => {
  async function bigPlan() {
    const ctx = setup();
    const convo = await ctx.kioku.startConversation(alice);
    const scope = { ...alice, threadId: convo.sessionId };
    await ctx.plans.create(scope, {
      goal: 'Launch the new marketing site',
      steps: ['Collect content', 'Write copy', 'Build pages', 'Review with legal', 'Deploy'],
    });
    await ctx.plans.updateStep(scope, '1', { status: 'completed', notes: 'Content is in the shared drive' });
    await ctx.plans.updateStep(scope, '2', { status: 'completed', notes: 'Copy approved by marketing lead' });
    await ctx.plans.updateStep(scope, '3', { status: 'in_progress', notes: 'Home and pricing pages done' });
    await ctx.plans.updateStep(scope, '4', { notes: 'Legal needs two days notice' });
    for (const text of ['Use the brand colours', 'Launch date is March 3', 'No cookie banner needed'])
      await ctx.plans.addContextNote(scope, text);
    return { plan: (await ctx.plans.get(scope))!, sessionId: convo.sessionId, ...ctx };
  }

  const CUT_ORDER = [
    'step-1/notes',
    'step-2/notes',
    'context-note-1',
    'context-note-2',
    'context-note-3',
    'step-4/notes',
    'step-3/notes',
    'step-1',
    'step-2',
    'step-5',
    'step-4',
    'step-3',
  ];

  it('degrades in order — finished notes, oldest context notes, open notes, steps — and never exceeds', async () => {
    const { plan, sessionId, plans, sessions } = await bigPlan();
    const full = blockTokens(plan);
    const allSteps = new Set(plan.steps.map((st) => st.id));
    const fullyCut = renderPlan(plan, {
      hiddenNotes: allSteps,
      hiddenSteps: allSteps,
      hiddenContextNotes: 3,
    });
    expect(fullyCut).toBe(
      [
        '[CURRENT_PLAN]',
        'Goal: Launch the new marketing site',
        `Plan ID: ${plan.id}`,
        'Created: 2025-01-15 10:00:00',
        'Status: In Progress',
        '',
        'Steps:',
        '  … 5 steps not shown',
        '',
        'Context Notes:',
        '  … 3 older notes not shown',
        '',
        '[END_CURRENT_PLAN]',
      ].join('\n'),
    );
    const minimal = countMessageTokens(defaultTokenizer, { role: 'system', content: fullyCut });
    let previousCuts = 0;
    const seen = new Set<number>();
    for (let share = full; share >= 10; share--) {
      // Same plan and session, in a stack whose budget gives the plan `share` tokens.
      const stack = new KiokuBuilder({
        stores: bundleWith({ sessions }),
        systemPrompt: 'You are helpful.',
        budget: { maxTokens: 16_000, shares: { plan: share } },
      })
        .use(planMode({ store: plans }))
        .build();
      const convo = await stack.resumeConversation(alice, sessionId);
      const turn = await convo.prepare('next?');
      expectLedgerAddsUp(turn, 16_000);
      const entry = entryOf(turn, 'plan');
      expect(entry.tokens).toBeLessThanOrEqual(share);
      const cuts = entry.dropped.map((d) => d.id);
      if (entry.included === 0) {
        expect(cuts).toEqual([plan.id]);
        expect(entry.dropped[0]).toMatchObject({ reason: 'budget', tokens: full });
        // Only budgets below the fully cut block (header and "… not shown" lines) lose the whole plan.
        expect(share).toBeLessThan(minimal);
        continue;
      }
      expect(cuts).toEqual(CUT_ORDER.slice(0, cuts.length));
      expect(share).toBeGreaterThanOrEqual(minimal);
      expect(cuts.length).toBeGreaterThanOrEqual(previousCuts);
      previousCuts = cuts.length;
      seen.add(cuts.length);
      const block = injected(turn)[0]!;
      expect(block.startsWith('[CURRENT_PLAN]\nGoal: Launch the new marketing site\n')).toBe(true);
      expect(block.endsWith('\n[END_CURRENT_PLAN]')).toBe(true);
      if (share === full) expect(cuts).toEqual([]);
      if (share === full - 1) {
        expect(cuts).toEqual(['step-1/notes']);
        expect(block).not.toContain('Content is in the shared drive');
        expect(block).toContain('Copy approved by marketing lead');
      }
      if (cuts.includes('context-note-1') && !cuts.includes('context-note-2')) {
        expect(block).toContain('  … 1 older note not shown\n  • [');
        expect(block).not.toContain('brand colours');
        expect(block).toContain('Launch date is March 3');
      }
      if (cuts.includes('step-1') && !cuts.includes('step-5')) {
        expect(block).not.toContain('Collect content');
        expect(block).toContain('◐ [3] Build pages (InProgress)');
      }
    }
    expect(previousCuts).toBe(CUT_ORDER.length);
    // Every stage was reached on the way down, including the ones checked in detail above.
    expect([...seen].sort((a, b) => a - b)).toEqual(CUT_ORDER.map((_, i) => i).concat(CUT_ORDER.length));
  });

  it('fits the default 500-token plan share with a long plan and reports the steps it left out', async () => {
    const { plans, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    const scope = { ...alice, threadId: convo.sessionId };
    const steps = Array.from({ length: 60 }, (_, i) => `Migrate service number ${i + 1} to the new cluster`);
    await plans.create(scope, { goal: 'Move everything to the new cluster', steps });
    for (let i = 1; i <= 20; i++) await plans.updateStep(scope, String(i), { status: 'completed' });
    const turn = await convo.prepare('next?');
    const entry = entryOf(turn, 'plan');
    expect(entry.allottedTokens).toBe(500);
    expect(entry.tokens).toBeLessThanOrEqual(500);
    expect(entry.included).toBe(1);
    expectLedgerAddsUp(turn, 16_000);
    const block = injected(turn)[0]!;
    const hidden = entry.dropped.length;
    expect(block).toContain(`  … ${hidden} steps not shown`);
    // Finished steps went first: step 1 is gone, the open step 21 is still there.
    expect(entry.dropped[0]).toMatchObject({ id: 'step-1', reason: 'budget' });
    expect(block).toContain('○ [21] Migrate service number 21');
  });
});

describe('planMode — tools', () => {
  it('returns bad arguments, unknown steps and a missing plan as errors and changes nothing', async () => {
    const { plans, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    const scope = { ...alice, threadId: convo.sessionId };

    const early = await convo.run(
      'before any plan',
      scriptedModel([
        callTools(['add_plan_step', { description: 'x' }], ['add_context_note', { note: 'x' }]),
        answer(),
      ]),
    );
    expect(toolResults(early.messages)).toEqual([{ error: 'NOT_FOUND' }, { error: 'NOT_FOUND' }]);
    expect(await plans.get(scope)).toBeNull();

    await plans.create(scope, { goal: 'Ship', steps: ['One', 'Two'] });
    const before = await plans.get(scope);
    const result = await convo.run(
      'break it',
      scriptedModel([
        callTools(
          ['update_plan_step', { step_id: '9', status: 'completed' }],
          ['update_plan_step', { step_id: '1', status: 'done' }],
          ['update_plan_step', { step_id: 'one', status: 'completed' }],
          ['update_plan_step', { step_id: '1' }],
          ['add_plan_step', { description: 'x', after_step_id: '42' }],
          ['add_plan_step', { description: '' }],
          ['add_context_note', {}],
          ['create_plan', { goal: '', steps: [] }],
          ['create_plan', { goal: 'New', steps: 'a, b' }],
          ['complete_plan', 'not json'],
        ),
        answer(),
      ]),
    );
    expect(toolResults(result.messages)).toEqual([
      { error: 'NOT_FOUND' },
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
      { error: 'NOT_FOUND' },
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
      { error: 'VALIDATION' },
      { error: 'INVALID_JSON' },
    ]);
    expect(await plans.get(scope)).toEqual(before);
  });

  it('checks each edit against the plan the model was shown: a change made since is CONFLICT, shown as it is now, and a retry applies', async () => {
    const { plans, kioku } = setup();
    const convo = await kioku.startConversation(alice);
    const scope = { ...alice, threadId: convo.sessionId };
    await plans.create(scope, { goal: 'Ship', steps: ['Build', 'Test'] });
    const script = scriptedModel([
      callTools(['update_plan_step', { step_id: '1', status: 'completed' }]),
      callTools(['update_plan_step', { step_id: '1', status: 'completed', notes: 'CI is green now' }]),
      callTools(['add_context_note', { note: 'Released on Friday' }]),
      answer(),
    ]);
    const model: ChatModel = {
      async complete(request) {
        // Another app instance blocks step 1 while the model thinks about the plan it was shown.
        if (script.prompts.length === 0)
          await plans.updateStep(scope, '1', { status: 'blocked', notes: 'CI red' });
        return script.complete(request);
      },
    };
    const result = await convo.run('Step 1 is done', model);
    const tools = result.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    const conflict = JSON.parse(tools[0]!).error;
    expect(conflict.code).toBe('CONFLICT');
    expect(conflict.message).toContain('⊘ [1] Build (Blocked)');
    expect(conflict.message).toContain('Notes: CI red');
    expect(tools.slice(1)).toEqual([
      'Step 1 (Build) is now Completed.',
      expect.stringMatching(/^Added context note/),
    ]);
    expect(await plans.get(scope)).toMatchObject({
      version: 4,
      steps: [{ status: 'completed', notes: 'CI is green now' }, { status: 'pending' }],
      contextNotes: [{ text: 'Released on Friday' }],
    });
  });

  it('offers the five plan tools', async () => {
    const { kioku } = setup();
    const convo = await kioku.startConversation(alice);
    expect(convo.tools.map((t) => t.function.name)).toEqual([
      'create_plan',
      'update_plan_step',
      'add_plan_step',
      'add_context_note',
      'complete_plan',
    ]);
    const update = convo.tools.find((t) => t.function.name === 'update_plan_step')!;
    expect(update.function.parameters).toMatchObject({
      required: ['step_id', 'status'],
      properties: { status: { enum: ['pending', 'in_progress', 'completed', 'blocked', 'skipped'] } },
    });
  });
});
