import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/adapter.js';

describe('redactUrl', () => {
  it.each([
    ['redis://:s3cret@127.0.0.1:6379/0', 'redis://:***@127.0.0.1:6379/0'],
    ['redis://default:s3cret@cache:6379', 'redis://default:***@cache:6379'],
    ['postgres://kioku:p%40ss@db:5432/app', 'postgres://kioku:***@db:5432/app'],
    ['postgres://kioku:p@ss@db/app', 'postgres://kioku:***@db/app'],
    [
      'postgres://kioku@db/app?password=s3cret&sslmode=require',
      'postgres://kioku@db/app?password=***&sslmode=require',
    ],
    ['qdrant:http://q:6333/?api_key=s3cret#c', 'qdrant:http://q:6333/?api_key=***#c'],
    ['https://h/x?sslmode=disable&Token=s3cret', 'https://h/x?sslmode=disable&Token=***'],
  ])('redacts %s', (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
    expect(redactUrl(input)).not.toContain('s3cret');
  });

  it('redacts every URL inside a message and leaves the rest alone', () => {
    const message =
      'worker w1 on redis://:s3cret@h:6379 (fallback postgres://u:s3cret@db/app?password=s3cret)';
    expect(redactUrl(message)).toBe(
      'worker w1 on redis://:***@h:6379 (fallback postgres://u:***@db/app?password=***)',
    );
  });

  it('leaves URLs without secrets, paths and plain text unchanged', () => {
    for (const text of [
      'sqlite:./kioku.db',
      'postgres://kioku@db:5432/app?sslmode=require',
      'no url here',
      'json:/tmp/x',
    ]) {
      expect(redactUrl(text)).toBe(text);
    }
  });
});
