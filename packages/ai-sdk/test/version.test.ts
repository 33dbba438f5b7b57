import { describe, expect, inject, it } from 'vitest';

describe('the test matrix', () => {
  it('resolves `ai` to the major this project is named for', async () => {
    const major = inject('aiSdk').replace('ai@', '');
    const test = await import('ai/test');
    // MockLanguageModelV4 arrived with AI SDK 7.
    expect('MockLanguageModelV4' in test).toBe(major === '7');
  });
});
