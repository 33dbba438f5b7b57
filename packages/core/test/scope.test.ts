import { describe, expect, it } from 'vitest';
import { parseScope, parseThreadScope } from '../src/adapter.js';
import { ValidationError } from '../src/index.js';

describe('parseScope', () => {
  it('returns what the schema returns, on the first call and the next ones alike', () => {
    for (const scope of [
      { userId: 'scope-u1' },
      { userId: 'scope-u1', agentId: 'a1' },
      { userId: 'scope-u1', agentId: 'a1', threadId: 't1' },
      { userId: 'scope-u1', threadId: 't1', extra: 'dropped' } as { userId: string },
    ]) {
      const first = parseScope(scope);
      const again = parseScope(scope);
      expect(again).toEqual(first);
      expect(Object.keys(again)).toEqual(Object.keys(first));
      expect(again).not.toBe(scope);
    }
  });

  it('refuses a bad scope every time, whatever was accepted before', () => {
    parseScope({ userId: 'scope-u2' });
    for (let i = 0; i < 2; i++) {
      expect(() => parseScope({ userId: 'scope-u2', agentId: 'bad id' })).toThrow(ValidationError);
      expect(() => parseScope({ userId: '' })).toThrow(ValidationError);
      expect(() => parseScope({ userId: 'scope-u2', agentId: 3 } as never)).toThrow(ValidationError);
      expect(() => parseScope(undefined)).toThrow(ValidationError);
    }
  });

  it('parseThreadScope: the same scope every call, and a thread still required after a scope without one', () => {
    const scope = { userId: 'scope-u3', threadId: 't3', extra: 'dropped' } as {
      userId: string;
      threadId: string;
    };
    const first = parseThreadScope(scope);
    expect(first).toEqual({ userId: 'scope-u3', threadId: 't3' });
    expect(parseThreadScope(scope)).toEqual(first);
    parseScope({ userId: 'scope-u3' });
    for (let i = 0; i < 2; i++) {
      expect(() => parseThreadScope({ userId: 'scope-u3' } as never)).toThrow(/threadId is required/);
      expect(() => parseThreadScope({ userId: 'scope-u3', threadId: 'bad id' })).toThrow(ValidationError);
    }
  });
});
