import { describe, expect, inject, it } from 'vitest';

describe('the test matrix', () => {
  it('resolves @openai/agents to the version this project is named for', async () => {
    const latest = inject('agentsSdk') === 'agents@latest';
    // The SDK's own test utilities (`ScriptedModel`) ship from 0.15 on.
    const specifier = '@openai/agents/testing';
    const hasTesting = await import(specifier).then(
      () => true,
      () => false,
    );
    expect(hasTesting).toBe(latest);
  });
});
