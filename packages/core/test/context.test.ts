import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { currentThreadScope, tryCurrentScope } from '../src/foundation/context.js';
import { currentScope, runWithScope, ScopeError, ValidationError } from '../src/index.js';

describe('scope context', () => {
  it('throws a ScopeError outside a turn instead of falling back to a global scope', () => {
    expect(() => currentScope()).toThrow(ScopeError);
    expect(tryCurrentScope()).toBeUndefined();
  });

  it('flows the scope through awaits and timers inside the turn', async () => {
    const seen = await runWithScope({ userId: 'alice', threadId: 't1' }, async () => {
      await delay(5);
      return new Promise((resolve) => setImmediate(() => resolve(currentScope())));
    });
    expect(seen).toEqual({ userId: 'alice', threadId: 't1' });
    expect(tryCurrentScope()).toBeUndefined();
  });

  it('keeps concurrent turns of different users apart', async () => {
    const turn = (userId: string, wait: number) =>
      runWithScope({ userId }, async () => {
        await delay(wait);
        return currentScope().userId;
      });
    expect(await Promise.all([turn('alice', 20), turn('bob', 5), turn('carol', 10)])).toEqual([
      'alice',
      'bob',
      'carol',
    ]);
  });

  it('rejects an invalid scope before running anything', () => {
    let ran = false;
    expect(() =>
      runWithScope({ userId: '../../etc/passwd' }, () => {
        ran = true;
      }),
    ).toThrow(ValidationError);
    expect(ran).toBe(false);
  });

  it('hands out a frozen scope so a tool cannot switch users mid-turn', () => {
    runWithScope({ userId: 'alice' }, () => {
      const scope = currentScope() as { userId: string };
      expect(() => {
        scope.userId = 'mallory';
      }).toThrow(TypeError);
    });
  });
});

describe('thread scope', () => {
  it('requires a threadId', () => {
    runWithScope({ userId: 'alice' }, () => expect(() => currentThreadScope()).toThrow(ScopeError));
    runWithScope({ userId: 'alice', threadId: 't9' }, () => expect(currentThreadScope().threadId).toBe('t9'));
  });
});
