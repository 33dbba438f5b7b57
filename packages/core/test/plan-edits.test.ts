import { describe, expect, it } from 'vitest';
import { newPlan, planEdits } from '../src/adapter.js';
import type { Plan } from '../src/index.js';
import { deepFreeze } from '../src/store/backend/record-partition.js';

// The conformance suite checks what every PlanStore does; these check what the adapters rely on the
// edits for: input is refused before any plan is read, and an edit can be applied again (Redis retries
// a compare-and-set with the same edit) without touching the plan it was given.

const T0 = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-01T00:01:00.000Z';
const scope = { userId: 'u1', threadId: 't1' };

function plan(): Plan {
  return deepFreeze(newPlan(scope, { goal: 'ship', steps: ['a', 'b'] }, T0));
}

describe('planEdits', () => {
  it('refuses bad input when the edit is made, before a plan is seen', () => {
    expect(() => planEdits.updateStep('1', {}, T1)).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
    expect(() => planEdits.addStep({ description: ' ' }, T1)).toThrow(
      expect.objectContaining({ code: 'VALIDATION' }),
    );
    expect(() => planEdits.addContextNote('', T1)).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
  });

  it('leaves the given plan alone and gives the same result when applied twice', () => {
    const before = plan();
    const copy = structuredClone(before);
    for (const edit of [
      planEdits.updateStep('2', { status: 'completed', notes: undefined }, T1),
      planEdits.addStep({ description: 'c', afterStepId: '1' }, T1),
      planEdits.addContextNote('note', T1),
      planEdits.complete(T1),
    ]) {
      const once = edit(before);
      expect(edit(before)).toEqual(once);
      expect(before).toEqual(copy);
      expect(once.updatedAt).toBe(T1);
    }
  });

  it('keeps fields an update does not give', () => {
    const withNotes = planEdits.updateStep('1', { notes: 'why' }, T1)(plan());
    const done = planEdits.updateStep('1', { status: 'completed', notes: undefined }, T1)(withNotes);
    expect(done.steps[0]).toEqual({
      id: '1',
      description: 'a',
      status: 'completed',
      notes: 'why',
      updatedAt: T1,
    });
  });
});
