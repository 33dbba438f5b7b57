import path from 'node:path';
import { sse, streamText } from '@kioku/openai-test-server';
import { type PgvectorTestServer, startPgvectorTestServer } from '@kioku/pgvector-test-server';
import { type QdrantTestServer, startQdrantTestServer } from '@kioku/qdrant-test-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDING_FLAGS, startEndpoint } from './endpoint.js';
import { runCli, useDataDir } from './run.js';

/** /ledger after the misspelt question: the vector search found the fact, which the fact block (mode `all`) already shows. */
const RECALLED_BUT_SHOWN = /fact-recall +\d+ tokens {2}0 included, dropped: 1 already-injected/;
/** Every message of a request to the model, joined. */
const promptOf = (body: Record<string, unknown>) =>
  (body.messages as { content: string | null }[]).map((m) => m.content ?? '').join('\n');
const KUBERNETES = 'Deploys everything with Kubernetes';
// Shares no word with the fact: lexical search alone finds nothing (the tour prints that); only the
// vectors relate "kuberntes" to "Kubernetes".
const MISSPELT = 'Do we use kuberntes?';

const temp = useDataDir('kioku-demo-vectors-');
let qdrant: QdrantTestServer;
let pgvector: PgvectorTestServer;
beforeAll(async () => {
  qdrant = await startQdrantTestServer();
  pgvector = await startPgvectorTestServer();
});
afterAll(async () => {
  await qdrant.stop();
  await pgvector.stop();
});
afterEach(() => {
  expect(qdrant.violations, qdrant.report()).toEqual([]);
});

/**
 * Run 1 saves two facts (one streamed reply with two create_memory calls). They share no word, category
 * included, so a lexical hit on one never brings the other along through query expansion.
 */
const saveTwoFacts = () => [
  sse([
    {
      tool_calls: [
        createMemory(0, { title: 'Units', content: 'Prefers metric units', category: 'preferences' }),
        createMemory(1, { title: 'Infra', content: KUBERNETES, category: 'ops' }),
      ],
    },
  ]),
  streamText('Noted.'),
];
const createMemory = (index: number, args: Record<string, string>) => ({
  index,
  id: `call_${index}`,
  type: 'function',
  function: { name: 'create_memory', arguments: JSON.stringify(args) },
});

describe('hybrid recall in the chat', () => {
  it('memory index: vectors are rebuilt at start, and a misspelt question recalls a fact of the last run', async () => {
    const server = await startEndpoint([...saveTwoFacts(), streamText('Metric.'), streamText('Yes.')]);
    temp.closeAfter(server.close);
    const env = { OPENAI_BASE_URL: server.baseURL, KIOKU_DATA_DIR: temp.dataDir };
    const first = await runCli(EMBEDDING_FLAGS, { env, input: 'I like metric units and use Kubernetes.\n' });
    expect(first.stdout).toContain('Embeddings: kioku-hashing (256 dimensions), in-memory index');
    expect(first.stdout).toContain('Vectors rebuilt with kioku-hashing: facts 0, documents 0, details 0.');

    const second = await runCli(EMBEDDING_FLAGS, {
      env,
      input: `Which units do I prefer?\n${MISSPELT}\n/ledger\n`,
    });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Vectors rebuilt with kioku-hashing: facts 2, documents 0, details 0.');
    // Not the first turn of the session, so no "newest facts" fallback: only a search hit is recalled, and
    // this one is left out because the [DYNAMIC_MEMORY] block already holds it: once in the prompt.
    expect(second.stdout).toMatch(RECALLED_BUT_SHOWN);
    expect(promptOf(server.chats()[3]!).split(KUBERNETES)).toHaveLength(2);
  });

  it('--vectors qdrant: vectors persist across runs; a model change is reported and /reembed repairs it', async () => {
    const server = await startEndpoint([
      ...saveTwoFacts(),
      streamText('Metric.'),
      streamText('Yes.'),
      streamText('Yes, still.'),
    ]);
    temp.closeAfter(server.close);
    const collection = `demo_${path.basename(temp.dataDir).replace(/\W/g, '_')}`;
    const env = { OPENAI_BASE_URL: server.baseURL, KIOKU_DATA_DIR: temp.dataDir, QDRANT_URL: qdrant.url };
    const flags = [...EMBEDDING_FLAGS, '--vectors', 'qdrant', '--qdrant-collection', collection];

    const first = await runCli(flags, { env, input: 'I like metric units and use Kubernetes.\n' });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Embeddings: kioku-hashing (256 dimensions), Qdrant');
    expect(qdrant.collections.handle('count_points', { collection_name: collection }, {})).toEqual({
      count: 2,
    });

    // No rebuild at start: the second run finds the vectors the first one wrote.
    const second = await runCli(flags, { env, input: `Which units do I prefer?\n${MISSPELT}\n/ledger\n` });
    expect(second.stdout).not.toContain('Vectors rebuilt');
    expect(second.stdout).toMatch(RECALLED_BUT_SHOWN);

    // Another embedding model: the stored vectors are refused, with the way out; /reembed rebuilds them.
    const other = ['--embedding-model', 'other-hash', '--embedding-dimensions', '256'];
    const third = await runCli([...flags, ...other], {
      env,
      input: `${MISSPELT}\n/reembed\n${MISSPELT}\n/ledger\n`,
    });
    expect(third.code).toBe(0);
    expect(third.stdout).toMatch(
      /error: CONFLICT — The facts vectors of this scope were made by another embedding model/,
    );
    expect(third.stdout).toContain('Type /reembed to rebuild your vectors');
    expect(third.stdout).toContain('Vectors rebuilt with other-hash: facts 2, documents 0, details 0.');
    expect(third.stdout).toContain('kioku › Yes, still.');
    expect(third.stdout).toMatch(RECALLED_BUT_SHOWN);
  });

  it('--vectors postgres: vectors in pgvector (PGlite here) persist across runs', async () => {
    const server = await startEndpoint([...saveTwoFacts(), streamText('Metric.'), streamText('Yes.')]);
    temp.closeAfter(server.close);
    // The stand-in serves every connection from one PostgreSQL session: the second run's process would meet
    // the named statements the first one prepared ("already exists"), and two connections of one pool would
    // overwrite each other's unnamed statement. So no named statements, and one connection per process.
    const databaseUrl = `${pgvector.url}?prepare=false&max=1`;
    const env = { OPENAI_BASE_URL: server.baseURL, KIOKU_DATA_DIR: temp.dataDir, DATABASE_URL: databaseUrl };
    const flags = [...EMBEDDING_FLAGS, '--vectors', 'postgres'];

    const first = await runCli(flags, { env, input: 'I like metric units and use Kubernetes.\n' });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Embeddings: kioku-hashing (256 dimensions), PostgreSQL (pgvector)');
    const counted = await pgvector.db.query<{ n: number }>('select count(*)::int as n from kioku.vectors');
    expect(counted.rows[0]?.n).toBe(2);

    const second = await runCli(flags, { env, input: `Which units do I prefer?\n${MISSPELT}\n/ledger\n` });
    expect(second.code).toBe(0);
    expect(second.stdout).not.toContain('Vectors rebuilt');
    expect(second.stdout).toMatch(RECALLED_BUT_SHOWN);
  });
});
