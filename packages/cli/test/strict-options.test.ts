import { OptionError } from '@kioku/core/adapter';
import { createPostgresStores } from '@kioku/store-postgres';
import { createRedisStores } from '@kioku/store-redis';
import { describe, expect, it } from 'vitest';
import { parseBackend } from '../src/backends.js';
import { UsageError } from '../src/errors.js';
import { openStores } from '../src/stores.js';

// biome-ignore lint/suspicious/noExplicitAny: the cases are what plain JavaScript can pass.
const loose = (value: object) => value as any;

/** Each case is refused before any store opens or any connection is tried. */
const CASES: Array<{
  name: string;
  call: () => unknown;
  option: string;
  suggestion?: string;
  message: RegExp;
}> = [
  {
    name: 'openStores({ memories }): a key that names no kind',
    call: () => openStores(loose({ memories: 'json:./nowhere' })),
    option: 'memories',
    message: /openStores: memories is not an option \(valid: default, /,
  },
  {
    name: 'openStores({ fact }): a misspelt kind',
    call: () => openStores(loose({ default: 'json:./nowhere', fact: 'json:./nowhere' })),
    option: 'fact',
    suggestion: 'facts',
    message: /Did you mean "facts"\?/,
  },
  {
    name: 'openStores with a role that does not exist',
    call: () => openStores('json:./nowhere', loose({ role: 'sourc' })),
    option: 'role',
    suggestion: 'source',
    message: /openStores options: role is "sourc", not one of "target", "source"/,
  },
  {
    name: 'createPostgresStores with postgress://',
    call: () => createPostgresStores({ url: 'postgress://postgres@127.0.0.1:5432/postgres' }),
    option: 'url',
    suggestion: 'postgres',
    message: /PostgreSQL stores: url has the scheme "postgress:"; use postgres:\/\/, postgresql:\/\//,
  },
  {
    name: 'createRedisStores with an http:// URL',
    call: () => createRedisStores({ url: 'http://127.0.0.1:6379' }),
    option: 'url',
    message: /Redis stores: url has the scheme "http:"; use redis:\/\/, rediss:\/\//,
  },
];

describe('strict options of openStores and the store factories', () => {
  it.each(CASES)('$name', async ({ call, option, suggestion, message }) => {
    const error = await (async () => call())().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OptionError);
    expect((error as OptionError).option).toBe(option);
    expect((error as OptionError).suggestion).toBe(suggestion);
    expect((error as OptionError).message).toMatch(message);
  });

  it('names the nearest built-in scheme of a mistyped backend', () => {
    expect(() => parseBackend('postgress://postgres@127.0.0.1/kioku')).toThrow(UsageError);
    expect(() => parseBackend('postgress://postgres@127.0.0.1/kioku')).toThrow(/Did you mean "postgres:"\?/);
  });
});
