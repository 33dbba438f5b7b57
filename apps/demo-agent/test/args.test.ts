import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDemoArgs } from '../src/args.js';

describe('parseDemoArgs', () => {
  it('defaults to JSON in ./.kioku-data for demo-user', () => {
    const args = parseDemoArgs([], {});
    expect(args.userId).toBe('demo-user');
    expect(args.dataDir).toBe(path.resolve('.kioku-data'));
    expect(args.sandbox).toBe(path.join(args.dataDir, 'sandbox'));
    expect(Object.values(args.backends)).toEqual(['json', 'json', 'json', 'json', 'json', 'json']);
    expect(args).toMatchObject({
      knowledge: [],
      embeddings: true,
      embeddingModel: 'text-embedding-3-small',
      embeddingDimensions: undefined,
      vectors: 'memory',
    });
  });

  it('picks a backend per kind from flags over env over --store', () => {
    const args = parseDemoArgs(['--store', 'sqlite', '--facts', 'postgres', '--user', 'bob'], {
      KIOKU_STORE_WORKING: 'redis',
      KIOKU_DATA_DIR: '/tmp/x',
    });
    expect(args.backends).toEqual({
      facts: 'postgres',
      documents: 'sqlite',
      plans: 'sqlite',
      working: 'redis',
      sessions: 'sqlite',
      details: 'sqlite',
    });
    expect(args.userId).toBe('bob');
    expect(args.dataDir).toBe(path.resolve('/tmp/x'));
  });

  it('takes backend specs as the kioku CLI does: sqlite:<file>, postgres://…, redis://…', () => {
    const args = parseDemoArgs(
      [
        '--store',
        'postgres://kioku@127.0.0.1:5432/app',
        '--working',
        'redis://127.0.0.1:6390',
        '--details',
        'sqlite:./d.db',
      ],
      {},
    );
    expect(args.backends).toEqual({
      facts: 'postgres',
      documents: 'postgres',
      plans: 'postgres',
      working: 'redis',
      sessions: 'postgres',
      details: 'sqlite',
    });
    expect(args).toMatchObject({
      postgresUrl: 'postgres://kioku@127.0.0.1:5432/app',
      redisUrl: 'redis://127.0.0.1:6390',
      sqliteFile: './d.db',
    });
    expect(() => parseDemoArgs(['--store', 'redis://a:1', '--facts', 'redis://b:2'], {})).toThrow(
      /a second redis location/,
    );
    expect(() => parseDemoArgs(['--store', 'json:./x'], {})).toThrow(/--data-dir/);
  });

  it('reads knowledge sources, embedding and vector settings from flags over env', () => {
    const args = parseDemoArgs(
      [
        '--knowledge',
        'a.md',
        '--knowledge',
        'https://example.com/b',
        '--vectors',
        'qdrant',
        '--embeddings',
        'off',
      ],
      {
        OPENAI_EMBEDDING_MODEL: 'nomic-embed-text',
        OPENAI_EMBEDDING_DIMENSIONS: '768',
        KIOKU_VECTORS: 'memory',
        QDRANT_URL: 'http://qdrant:6333',
        QDRANT_API_KEY: 'k',
      },
    );
    expect(args).toMatchObject({
      knowledge: ['a.md', 'https://example.com/b'],
      embeddings: false,
      embeddingModel: 'nomic-embed-text',
      embeddingDimensions: 768,
      vectors: 'qdrant',
      qdrantUrl: 'http://qdrant:6333',
      qdrantApiKey: 'k',
    });
  });

  it('refuses unknown backends, values and flags', () => {
    expect(() => parseDemoArgs(['--store', 'mongo'], {})).toThrow(/--store: unknown value "mongo"/);
    expect(() => parseDemoArgs(['--vectors', 'pinecone'], {})).toThrow(/use memory, qdrant, postgres/);
    expect(() => parseDemoArgs(['--embeddings', 'maybe'], {})).toThrow(/use on, off/);
    expect(() => parseDemoArgs(['--embedding-dimensions', '1.5'], {})).toThrow(/not a positive integer/);
    expect(() => parseDemoArgs(['--nope'], {})).toThrow();
  });
});
