import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newToken, TokenTable } from '../src/index.js';
import { weakTokenProblem } from '../src/tokens.js';

const file = (tokens: unknown[]) => JSON.stringify({ tokens });

describe('TokenTable', () => {
  it('maps each token, given in clear or as its SHA-256, to exactly one user, agent and thread', () => {
    const a = newToken();
    const b = newToken();
    const table = TokenTable.parse(
      file([
        { user: 'alice', agent: 'claude', thread: 'work', token: a.token },
        { user: 'bob', sha256: createHash('sha256').update(b.token).digest('hex').toUpperCase() },
      ]),
    );
    expect(table.size).toBe(2);
    expect(table.check(`Bearer ${a.token}`)).toEqual({
      ok: true,
      identity: { userId: 'alice', agentId: 'claude', threadId: 'work' },
    });
    expect(table.check(`Bearer ${b.token}`)).toEqual({ ok: true, identity: { userId: 'bob' } });
    expect(table.check(undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(table.check('')).toEqual({ ok: false, reason: 'missing' });
    expect(table.check(`Bearer ${newToken().token}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(table.check(a.token)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('makes tokens that pass its own checks', () => {
    const { token, sha256 } = newToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(weakTokenProblem(token)).toBeNull();
    expect(sha256).toBe(createHash('sha256').update(token).digest('hex'));
  });

  it.each([
    ['short', 'abcDEF123456', /12 characters; use at least 32/],
    ['one character', 'a'.repeat(40), /fewer than 10 different characters/],
    ['a pattern', '0123456789abcdef'.repeat(3), /repeats one short pattern/],
    ['spaces', `${'abcdefghij'.repeat(4)} x`, /may contain only/],
    ['a password', 'correcthorsebatterystaple-password', null],
  ])('refuses a weak token (%s)', (_what, token, problem) => {
    if (problem === null) {
      expect(weakTokenProblem(token)).toBeNull();
      return;
    }
    expect(weakTokenProblem(token)).toMatch(problem);
    expect(() => TokenTable.parse(file([{ user: 'alice', token }]), 'tokens.json')).toThrow(
      /tokens\.json, entry 1 \(user "alice"\): the token is too weak/,
    );
  });

  it('refuses a token listed twice, in clear or by hash, even for the same user', () => {
    const { token, sha256 } = newToken();
    expect(() =>
      TokenTable.parse(
        file([
          { user: 'alice', token },
          { user: 'bob', token },
        ]),
      ),
    ).toThrow(/entry 2 \(user "bob"\): the same token as entry 1/);
    expect(() =>
      TokenTable.parse(
        file([
          { user: 'alice', token },
          { user: 'alice', sha256 },
        ]),
      ),
    ).toThrow(/the same token as entry 1/);
  });

  it('refuses files that are not exactly right, naming the entry and the field, never the token', () => {
    const { token, sha256 } = newToken();
    const cases: Array<[string, RegExp]> = [
      ['not json', /is not JSON/],
      ['[]', /must be \{ "tokens"/],
      [JSON.stringify({ tokens: [] }), /lists no token/],
      [JSON.stringify({ tokens: [{ user: 'alice', token }], extra: 1 }), /must be \{ "tokens"/],
      [file([{ user: 'alice' }]), /entry 1: give exactly one of "token" and "sha256"/],
      [file([{ user: 'alice', token, sha256 }]), /give exactly one of/],
      [file([{ user: '../etc', token }]), /entry 1: user may contain only/],
      [file([{ user: 'alice', token, role: 'admin' }]), /entry 1: .*Unrecognized key/],
      [file([{ user: 'alice', sha256: 'abc' }]), /sha256 must be 64 hex characters/],
    ];
    for (const [text, message] of cases) {
      let error: unknown;
      try {
        TokenTable.parse(text, 'tokens.json');
      } catch (caught) {
        error = caught;
      }
      expect((error as Error)?.message, text).toMatch(message);
      expect((error as Error).message).not.toContain(token);
      expect(error).toMatchObject({ code: 'VALIDATION' });
    }
  });
});
