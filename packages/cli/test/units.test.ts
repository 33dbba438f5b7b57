import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isKiokuError } from '@kioku/core';
import { describe, expect, it } from 'vitest';
import { importAdapter } from '../src/adapters.js';
import { plural } from '../src/args.js';
import {
  makeBundle,
  parseBackend,
  parseBundle,
  parseEmbedder,
  parseIndex,
  UsageError,
} from '../src/index.js';
import { parseKinds, parseVectorKinds } from '../src/kinds.js';

describe('parseBackend', () => {
  it('reads local paths after json:, file: and sqlite:, relative or as file URLs', () => {
    expect(parseBackend('json:./data')).toMatchObject({ type: 'json', directory: path.resolve('data') });
    expect(parseBackend('file:data')).toMatchObject({ type: 'json', directory: path.resolve('data') });
    const abs = path.resolve('/tmp/kioku data');
    expect(parseBackend(`json:${pathToFileURL(abs).href.slice('file:'.length)}`)).toMatchObject({
      directory: abs,
    });
    expect(parseBackend(pathToFileURL(abs).href)).toMatchObject({ type: 'json', directory: abs });
    expect(parseBackend('sqlite:./kioku.db')).toMatchObject({
      type: 'sqlite',
      file: path.resolve('kioku.db'),
      label: `sqlite:${path.resolve('kioku.db')}`,
    });
  });

  it("takes Kioku's own ?schema= / ?prefix= out of the connection URL and hides passwords", () => {
    const pg = parseBackend('postgres://kioku:s3cret@db.internal:6543/app?schema=memory&sslmode=require');
    expect(pg).toMatchObject({
      type: 'postgres',
      url: 'postgres://kioku:s3cret@db.internal:6543/app?sslmode=require',
      schema: 'memory',
      label: 'postgres://kioku:***@db.internal:6543/app?schema=memory&sslmode=require',
    });
    expect(parseBackend('postgresql://localhost/app')).toMatchObject({ type: 'postgres', schema: undefined });
    // The pool size and named statements are Kioku's options too; without ?pool= the store's default holds.
    expect(parseBackend('postgres://h/app?pool=6&prepare=false')).toMatchObject({
      url: 'postgres://h/app',
      pool: 6,
      prepare: false,
    });
    expect(parseBackend('postgres://h/app')).toMatchObject({ pool: undefined, prepare: true });
    expect(parseBackend('redis://:pw@localhost:6379/2?prefix=app:')).toMatchObject({
      type: 'redis',
      url: 'redis://:pw@localhost:6379/2',
      prefix: 'app:',
      label: 'redis://:***@localhost:6379/2?prefix=app:',
    });
  });

  it('names the same storage the same way however it is written', () => {
    const same = (a: string, b: string) => parseBackend(a).identity === parseBackend(b).identity;
    expect(same('postgres://a@h/db', 'postgresql://b@h:5432/db?schema=kioku')).toBe(true);
    expect(same('postgres://h/db', 'postgres://h/db?schema=other')).toBe(false);
    expect(same('redis://h', 'redis://h:6379/0?prefix=kioku:')).toBe(true);
    expect(same('json:./a', `json:${path.resolve('a')}/`)).toBe(true);
    expect(same('json:./a', 'sqlite:./a')).toBe(false);
  });

  it('rejects what it cannot read with a UsageError', () => {
    for (const input of [
      '',
      'data',
      'C:\\data',
      'json:',
      'mongodb://h/db',
      'sqlite::memory:',
      'postgres://[x',
      'postgres://h/app?pool=0',
      'postgres://h/app?pool=two',
    ]) {
      expect(() => parseBackend(input), input).toThrow(UsageError);
    }
  });
});

describe('parseKinds', () => {
  it('keeps copy order and drops duplicates', () => {
    expect(parseKinds('details, facts,facts')).toEqual(['facts', 'details']);
    expect(parseKinds(undefined)).toHaveLength(6);
  });

  it('reembed takes the four kinds that have vectors, all of them by default', () => {
    expect(parseVectorKinds(undefined)).toEqual(['facts', 'documents', 'details', 'transcript']);
    expect(parseVectorKinds('transcript,facts')).toEqual(['facts', 'transcript']);
    expect(() => parseVectorKinds('plans')).toThrow(UsageError);
  });
});

describe('parseIndex', () => {
  it("takes Qdrant's URL after qdrant:, the collection out of it, and hides passwords", () => {
    expect(parseIndex('qdrant:http://localhost:6333')).toEqual({
      type: 'qdrant',
      url: 'http://localhost:6333/',
      collection: undefined,
      label: 'qdrant:http://localhost:6333/',
    });
    expect(parseIndex('QDRANT:https://u:secret@q.internal/proxy?collection=kioku_3large')).toEqual({
      type: 'qdrant',
      url: 'https://u:secret@q.internal/proxy',
      collection: 'kioku_3large',
      label: 'qdrant:https://u:***@q.internal/proxy',
    });
  });
});

describe('parseEmbedder', () => {
  it('reads openai:<model> and hashing[:<dimensions>], with --dimensions', () => {
    expect(parseEmbedder('openai:text-embedding-3-small')).toEqual({
      type: 'openai',
      model: 'text-embedding-3-small',
      dimensions: undefined,
    });
    expect(parseEmbedder('openai:nomic-embed-text:v1.5', '768')).toEqual({
      type: 'openai',
      model: 'nomic-embed-text:v1.5',
      dimensions: 768,
    });
    expect(parseEmbedder('hashing')).toEqual({ type: 'hashing', dimensions: undefined });
    expect(parseEmbedder('hashing:64')).toEqual({ type: 'hashing', dimensions: 64 });
    expect(parseEmbedder('hashing', '64')).toEqual({ type: 'hashing', dimensions: 64 });
    expect(() => parseEmbedder('hashing', '1')).toThrow(UsageError);
  });
});

describe('importAdapter', () => {
  it('turns a missing adapter or driver into the install command', async () => {
    const notFound = Object.assign(new Error("Cannot find package 'better-sqlite3' imported from /x/y.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const error = await importAdapter('sqlite', () => Promise.reject(notFound)).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      'The sqlite: backend needs @kioku/store-sqlite and its drivers better-sqlite3, drizzle-orm (better-sqlite3 is not installed). Install them where @kioku/cli is installed:\n  npm install @kioku/store-sqlite better-sqlite3 drizzle-orm',
    );
    const noSdk = Object.assign(new Error("Cannot find package 'openai' imported from /x/y.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const openai = await importAdapter('openai', () => Promise.reject(noSdk)).catch((e: Error) => e);
    expect((openai as Error).message).toBe(
      'The openai: embedder needs @kioku/openai and its drivers openai (openai is not installed). Install them where @kioku/cli is installed:\n  npm install @kioku/openai openai',
    );
    const other = new TypeError('boom');
    await expect(importAdapter('json', () => Promise.reject(other))).rejects.toBe(other);
  });
});

describe('parseBundle', () => {
  const envelope = (kind: string, records: unknown[] = []) => ({
    format: 'kioku.snapshot',
    schemaVersion: 1,
    kind,
    createdAt: '2025-01-01T00:00:00.000Z',
    selector: { allUsers: true },
    records,
  });

  it('validates every envelope and accepts a lone snapshot', () => {
    const bundle = parseBundle(makeBundle({ plans: envelope('plans') as never }));
    expect(Object.keys(bundle.stores)).toEqual(['plans']);
    expect(Object.keys(parseBundle(envelope('facts')).stores)).toEqual(['facts']);
  });

  it.each([
    [[], 'VALIDATION', /not a Kioku bundle/],
    [
      { format: 'kioku.bundle', schemaVersion: 2, stores: {} },
      'UNSUPPORTED',
      /schemaVersion 2 is not supported/,
    ],
    [{ format: 'kioku.bundle', schemaVersion: '1', stores: {} }, 'UNSUPPORTED', /schemaVersion "1"/],
    [
      { format: 'kioku.bundle', schemaVersion: 1, stores: { vectors: {} } },
      'VALIDATION',
      /stores: Unrecognized key: "vectors"/,
    ],
    [
      { format: 'kioku.bundle', schemaVersion: 1, stores: { facts: envelope('plans') } },
      'VALIDATION',
      /"plans" snapshot; the facts store/,
    ],
    [
      {
        format: 'kioku.bundle',
        schemaVersion: 1,
        stores: { facts: { ...envelope('facts'), schemaVersion: 9 } },
      },
      'UNSUPPORTED',
      /Snapshot schemaVersion 9/,
    ],
    [
      { format: 'kioku.bundle', schemaVersion: 1, stores: { facts: envelope('facts', [{ id: 1 }]) } },
      'VALIDATION',
      /Invalid facts snapshot: records\.0\.id/,
    ],
    [envelope('vectors'), 'VALIDATION', /Unknown snapshot kind "vectors"/],
  ])('refuses %j', (input, code, message) => {
    let error: unknown;
    try {
      parseBundle(input);
    } catch (e) {
      error = e;
    }
    expect(isKiokuError(error), String(error)).toBe(true);
    expect((error as { code: string }).code).toBe(code);
    expect((error as Error).message).toMatch(message);
  });
});

describe('plural', () => {
  // `kioku worker` printed "58 turns in 8 passs" (bench:load, issue 40).
  it('adds -es after a sibilant and -s otherwise', () => {
    expect(plural(1, 'pass')).toBe('1 pass');
    expect(plural(8, 'pass')).toBe('8 passes');
    expect(plural(2, 'batch')).toBe('2 batches');
    expect(plural(0, 'turn')).toBe('0 turns');
  });
});
