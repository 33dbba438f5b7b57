import { defineTool, ScopeError, type Tool } from '@kioku/core';
import type { PlanStore } from '@kioku/core/store';
import { z } from 'zod';

export const GET_PLAN_TOOL = 'get_plan';

/**
 * `get_plan()`: the thread's plan as data, what a conversation shows the model as [CURRENT_PLAN]. Over MCP
 * there is no prompt to put it in, so the plan tools come with this one to read it.
 */
export function getPlanTool(plans: PlanStore): Tool {
  return defineTool({
    name: GET_PLAN_TOOL,
    description:
      'Read the current plan (goal, steps with their status and notes, context notes), or null when there is none.',
    parameters: z.object({}),
    async execute(_args, { scope }) {
      if (scope.threadId === undefined) throw new ScopeError('The plan needs a thread; this scope has none.');
      return { plan: await plans.get({ ...scope, threadId: scope.threadId }) };
    },
  });
}
