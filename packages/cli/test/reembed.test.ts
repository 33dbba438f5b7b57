import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { type Embedder, EmbeddingModelMismatchError, HashingEmbedder, type Scope } from '@kioku/core';
import {
  type VectorIndex,
  type VectorSnapshot,
  withDetailEmbeddings,
  withDocumentEmbeddings,
  withFactEmbeddings,
  withTranscriptEmbeddings,
} from '@kioku/core/store';
import { ManualClock } from '@kioku/core/testing';
import { json, type Reply, startScriptedServer, status } from '@kioku/openai-test-server';
import { type QdrantTestServer, startQdrantTestServer } from '@kioku/qdrant-test-server';
import { createJsonStores } from '@kioku/store-json';
import { QdrantVectorIndex } from '@kioku/store-qdrant';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Backend, VectorKind } from '../src/index.js';
import { VECTOR_KINDS } from '../src/kinds.js';
import { ALICE, ALICE_CODER, BOB, type CliResult, fillAllKinds, kioku, tempDir } from './helpers.js';

/** The model the application used so far, and the one `--embedder hashing:64` builds (same size). */
const OLD = new HashingEmbedder({ dimensions: 64, ngram: 2 });
const NEW = new HashingEmbedder({ dimensions: 64 });

let qdrant: QdrantTestServer;
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  qdrant = await startQdrantTestServer();
});
afterAll(async () => {
  await qdrant.stop();
});
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
  // Every request the CLI sent matched Qdrant's OpenAPI schema.
  expect(qdrant.violations, qdrant.report()).toEqual([]);
});

function ok(result: CliResult): CliResult {
  expect(result.stderr, result.stderr).toBe('');
  expect(result.code, result.stdout).toBe(0);
  return result;
}

function qdrantIndex(collection: string, dimensions = 64): QdrantVectorIndex {
  const client = new QdrantClient({ url: qdrant.url, checkCompatibility: false });
  return new QdrantVectorIndex({ client, collection, dimensions });
}

function hybrid(stores: Backend['stores'], embedder: Embedder, index: VectorIndex) {
  const options = { embedder, index };
  return {
    facts: withFactEmbeddings(stores.facts, options),
    documents: withDocumentEmbeddings(stores.documents, options),
    details: withDetailEmbeddings(stores.details, options),
    sessions: withTranscriptEmbeddings(stores.sessions, options),
  };
}

/**
 * A JSON store with every kind for alice (with and without an agent) and bob, written through hybrid
 * stores, so the index holds OLD's vectors of facts, document chunks, details and transcript entries.
 */
async function fixture() {
  const collection = `kioku_cli_${randomBytes(5).toString('hex')}`;
  const index = qdrantIndex(collection);
  await index.setup();
  const directory = path.join(dir, 'data');
  const clock = new ManualClock(Date.now() - 120_000);
  const stores = createJsonStores({ directory, clock });
  await fillAllKinds({ ...stores, ...hybrid(stores, OLD, index) }, clock);
  const store = ['--store', `json:${directory}`];
  const indexArg = `qdrant:${qdrant.url}?collection=${collection}`;
  return { stores, index, collection, store, args: [...store, '--index', indexArg] };
}

/** `kioku reembed` of `store` into another `--index`, with NEW's model. */
const reembedInto = (store: string[], index: string, ...rest: string[]) =>
  kioku(['reembed', ...store, '--index', index, '--embedder', 'hashing:64', ...rest]);

type ModelCounts = Record<VectorKind, Record<string, number>>;

/** Per kind, how many vectors of the scopes each model made (read through the index contract). */
async function modelCounts(index: VectorIndex, scopes: Scope[]): Promise<ModelCounts> {
  const out = {} as ModelCounts;
  for (const kind of VECTOR_KINDS) {
    out[kind] = {};
    for (const scope of scopes) {
      for (const { model, count } of await index.models(scope, { kind })) {
        const key = model ?? '(none)';
        out[kind][key] = (out[kind][key] ?? 0) + count;
      }
    }
  }
  return out;
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** The snapshot's points in a stable order, without its timestamp. */
function points(snapshot: VectorSnapshot) {
  const key = (r: VectorSnapshot['records'][number]) => `${r.userId}\u0000${r.agentId ?? ''}\u0000${r.id}`;
  return [...snapshot.records].sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The per-kind lines of a rebuild or a dry run, without what the rebuild removed. */
const kindLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .map((line) => line.replace(/, \d+ old removed$/, ''));

describe('kioku reembed', () => {
  it("rebuilds one user's vectors with the new model and leaves the other users' alone", async () => {
    const { stores, index, collection, args } = await fixture();
    const aliceBefore = await modelCounts(index, [ALICE, ALICE_CODER]);
    for (const kind of VECTOR_KINDS) expect(Object.keys(aliceBefore[kind]), kind).toEqual([OLD.modelId]);
    const bobBefore = points(await index.snapshot({ userId: 'bob' }));
    const withNew = hybrid(stores, NEW, index);
    await expect(withNew.facts.search(ALICE, { query: 'Lisbon' })).rejects.toBeInstanceOf(
      EmbeddingModelMismatchError,
    );

    const result = ok(await kioku(['reembed', ...args, '--embedder', 'hashing:64', '--user', 'alice']));
    expect(result.stdout).toContain(
      `Re-embedding user "alice" from json:${path.join(dir, 'data')} into qdrant:${qdrant.url}/ (collection ${collection}) with ${NEW.modelId}\n`,
    );
    expect(result.stdout).toMatch(/^ {2}facts +6 records +6 vectors {2}in 2 partitions, 6 old removed$/m);
    expect(result.stdout).toMatch(/^ {2}details +4 records +2 vectors {2}in 1 partition, 2 old removed$/m);
    for (const kind of VECTOR_KINDS) {
      const n = total(aliceBefore[kind]);
      expect(result.stdout).toMatch(new RegExp(`^  ${kind} .* ${n} vectors .*, ${n} old removed$`, 'm'));
    }
    const written = VECTOR_KINDS.reduce((sum, kind) => sum + total(aliceBefore[kind]), 0);
    expect(result.stdout).toContain(`Wrote ${written} vectors with model ${NEW.modelId}.`);

    // Alice's vectors are the new model's, as many as before; her hybrid searches work with it.
    const aliceAfter = await modelCounts(index, [ALICE, ALICE_CODER]);
    for (const kind of VECTOR_KINDS) {
      expect(aliceAfter[kind], kind).toEqual({ [NEW.modelId]: total(aliceBefore[kind]) });
    }
    const hits = await withNew.facts.search(ALICE_CODER, { query: 'Lisbon' });
    expect(hits[0]?.fact.content).toBe('User moved to Lisbon (Europe/Lisbon) — alice-coder');
    await withNew.documents.search(ALICE, { query: 'vacation days' });
    await withNew.details.search(ALICE, { query: 'npm install' });
    await withNew.sessions.searchTranscript(ALICE, { query: 'files in the repo' });

    // Bob's are exactly as they were, and still refuse the new model.
    expect(points(await index.snapshot({ userId: 'bob' }))).toEqual(bobBefore);
    expect(Object.keys((await modelCounts(index, [BOB])).facts)).toEqual([OLD.modelId]);
    await expect(withNew.facts.search(BOB, { query: 'Lisbon' })).rejects.toBeInstanceOf(
      EmbeddingModelMismatchError,
    );
  });

  it('--check shows per kind which models made the vectors, and exits 3 while another model made some', async () => {
    const { args } = await fixture();
    const check = ['reembed', ...args, '--embedder', 'hashing:64', '--check'];
    const before = await kioku([...check, '--user', 'alice']);
    expect(before.stderr).toBe('');
    expect(before.code).toBe(3);
    expect(before.stdout).toContain(`the embedder's model is ${NEW.modelId}\n`);
    expect(before.stdout).toMatch(/^ {2}facts +6 records, 6 vectors expected in 2 partitions$/m);
    expect(before.stdout).toMatch(new RegExp(`^ +6  ${literal(OLD.modelId)}  \\(another model\\)$`, 'm'));
    expect(before.stdout).not.toContain("(the embedder's)");
    expect(before.stdout).toContain(
      'facts, documents, details, transcript: vectors of another model; hybrid searches of them fail',
    );

    ok(await kioku(['reembed', ...args, '--embedder', 'hashing:64', '--user', 'alice', '--kinds', 'facts']));
    const facts = await kioku([...check, '--user', 'alice']);
    expect(facts.code).toBe(3);
    expect(facts.stdout).toMatch(new RegExp(`^ +6  ${literal(NEW.modelId)}  \\(the embedder's\\)$`, 'm'));
    expect(facts.stdout).toContain('\ndocuments, details, transcript: vectors of another model');

    ok(await kioku(['reembed', ...args, '--embedder', 'hashing:64', '--user', 'alice']));
    const after = ok(await kioku([...check, '--user', 'alice']));
    expect(after.stdout).not.toContain('another model');
    expect(after.stdout).toContain(`Every vector found was made by ${NEW.modelId}: nothing to rebuild.`);

    // Across all users, bob's old vectors show beside alice's new ones.
    const everyone = await kioku([...check, '--all-users']);
    expect(everyone.code).toBe(3);
    expect(everyone.stdout).toMatch(/^ {2}facts +9 records, 9 vectors expected in 3 partitions$/m);
    const factsBlock = everyone.stdout.split('\n  documents')[0]!;
    expect(factsBlock).toMatch(new RegExp(`^ +6  ${literal(NEW.modelId)}  \\(the embedder's\\)$`, 'm'));
    expect(factsBlock).toMatch(new RegExp(`^ +3  ${literal(OLD.modelId)}  \\(another model\\)$`, 'm'));
  });

  it('--dry-run counts what the rebuild writes and writes nothing; the rebuild then writes those counts', async () => {
    const { index, args } = await fixture();
    const before = points(await index.snapshot({ allUsers: true }));
    const dry = ok(await kioku(['reembed', ...args, '--embedder', 'hashing:64', '--all-users', '--dry-run']));
    expect(dry.stdout).toContain(`Dry run: would re-embed all users from json:${path.join(dir, 'data')}`);
    expect(dry.stdout).toMatch(/^ {2}facts +9 records +9 vectors {2}in 3 partitions$/m);
    expect(dry.stdout).toContain('; nothing was embedded or written.');
    expect(points(await index.snapshot({ allUsers: true }))).toEqual(before);

    const real = ok(await kioku(['reembed', ...args, '--embedder', 'hashing:64', '--all-users']));
    expect(kindLines(real.stdout)).toEqual(kindLines(dry.stdout));
    expect(kindLines(real.stdout)).toHaveLength(4);
    const after = await modelCounts(index, [ALICE, ALICE_CODER, BOB]);
    for (const kind of VECTOR_KINDS) expect(Object.keys(after[kind]), kind).toEqual([NEW.modelId]);
  });

  it('a dry run does not open the index', async () => {
    const { store } = await fixture();
    const dry = ok(await reembedInto(store, 'qdrant:http://127.0.0.1:1', '--user', 'bob', '--dry-run'));
    expect(dry.stdout).toMatch(/^ {2}facts +3 records +3 vectors {2}in 2 partitions$/m);
  });

  it('rebuilds with an OpenAI-compatible embeddings endpoint into a new collection of its size', async () => {
    const { stores, store } = await fixture();
    const collection = `kioku_cli_${randomBytes(5).toString('hex')}`;
    /** 8-dimensional vectors from the text's length and first letters, in the SDK's reply format. */
    const embeddings: Reply = (res, body) => {
      const data = (body.input as string[]).map((text, i) => ({
        object: 'embedding',
        index: i,
        embedding: [text.length, 1, ...[...text.slice(0, 6).padEnd(6)].map((c) => c.charCodeAt(0))],
      }));
      json(res, 200, {
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      });
    };
    const server = await startScriptedServer([...Array.from({ length: 5 }, () => embeddings), status(401)]);
    try {
      const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' };
      const common = [
        'reembed',
        ...store,
        '--index',
        `qdrant:${qdrant.url}?collection=${collection}`,
        '--embedder',
        'openai:local-embed',
        '--dimensions',
        '8',
        '--kinds',
        'facts,details',
      ];
      const result = ok(await kioku([...common, '--all-users'], { env }));
      expect(result.stdout).toMatch(/^ {2}facts +9 records +9 vectors {2}in 3 partitions$/m);
      expect(result.stdout).toMatch(/^ {2}details +6 records +3 vectors {2}in 2 partitions$/m);
      expect(result.stdout).toContain('Wrote 12 vectors with model local-embed.');

      // One request per partition and kind, for the model asked for, with the records' texts.
      expect(server.received).toHaveLength(5);
      for (const { path: p, body } of server.received) {
        expect(p).toBe('/v1/embeddings');
        expect(body).toMatchObject({ model: 'local-embed', encoding_format: 'float' });
        expect(body.dimensions).toBeUndefined();
      }
      const inputs = server.received.flatMap((r) => r.body.input as string[]);
      expect(inputs.some((t) => t.includes('User moved to Lisbon (Europe/Lisbon) — bob-helper'))).toBe(true);
      expect(inputs.some((t) => t.includes('ls -la'))).toBe(true);

      // The new collection holds local-embed's 8-dimensional vectors; hybrid search works with them.
      const index8 = qdrantIndex(collection, 8);
      expect(await index8.models(BOB, { kind: 'facts' })).toEqual([{ model: 'local-embed', count: 3 }]);
      expect(await index8.models(ALICE, { kind: 'details' })).toEqual([{ model: 'local-embed', count: 2 }]);
      const embedder: Embedder = {
        modelId: 'local-embed',
        dimensions: 8,
        embed: async () => [[1, 1, 0, 0, 0, 0, 0, 0]],
      };
      await withFactEmbeddings(stores.facts, { embedder, index: index8 }).search(BOB, { query: 'Lisbon' });

      // --check reads the index and embeds nothing.
      const check = ok(await kioku([...common, '--user', 'bob', '--check'], { env }));
      expect(check.stdout).toMatch(/^ +3 {2}local-embed {2}\(the embedder's\)$/m);
      expect(server.received).toHaveLength(5);

      // The endpoint failing is an operation failure: exit 1, the Kioku code, what was being done.
      const refused = await kioku([...common.slice(0, -2), '--kinds', 'facts', '--user', 'bob'], { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^kioku: STORAGE: The embeddings request failed with HTTP 401/);
      expect(refused.stderr).toContain(`while re-embedding json:${path.join(dir, 'data')}`);
      expect(refused.stderr).toContain(
        `into qdrant:${qdrant.url}/ (collection ${collection}): facts not rebuilt, or only in part (running the command again is safe)`,
      );
    } finally {
      await server.close();
    }
  });
});

describe('kioku reembed errors', () => {
  it('bad arguments exit with 2 from the real process', async () => {
    const base = ['reembed', '--store', `json:${dir}`, '--index', 'qdrant:http://127.0.0.1:1'];
    const results = await Promise.all([
      kioku([...base.slice(0, 3), '--index', 'pinecone://index', '--embedder', 'hashing', '--all-users']),
      kioku([...base, '--all-users']),
      kioku([...base, '--embedder', 'hashing', '--user', 'alice', '--all-users']),
      kioku([...base.slice(0, 3), '--index', 'memory:', '--embedder', 'hashing', '--all-users']),
      kioku([...base, '--embedder', 'openai:local-embed', '--all-users'], {
        env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: '' },
      }),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    const [scheme, embedder, both, memory, size] = results.map((r) => r.stderr);
    expect(scheme).toContain('Unknown vector index "pinecone:"');
    expect(embedder).toContain('--embedder is required, e.g. --embedder openai:text-embedding-3-small.');
    expect(both).toContain('Give either --user <id> or --all-users, not both.');
    expect(memory).toContain('An in-memory vector index is gone when the command exits');
    expect(size).toContain('The vector size of "local-embed" is not known; give it with --dimensions <n>');
    for (const r of results) expect(r.stderr).not.toContain('    at ');
  });

  it('an index that cannot take the vectors, a missing collection or no server exit with 1 and the code', async () => {
    const { index, collection, store, args } = await fixture();
    const before = points(await index.snapshot({ allUsers: true }));
    const [size, missing, down] = await Promise.all([
      kioku(['reembed', ...args, '--embedder', 'hashing:32', '--all-users']),
      reembedInto(store, `qdrant:${qdrant.url}?collection=no_such_collection`, '--all-users', '--check'),
      reembedInto(store, 'qdrant:http://127.0.0.1:1', '--all-users', '--check'),
    ]);
    expect(size.code).toBe(1);
    expect(size.stderr).toContain(
      `kioku: VALIDATION: Qdrant collection "${collection}" holds 64-dimensional Cosine vectors; this index is configured for 32-dimensional Cosine vectors.`,
    );
    expect(size.stderr).toContain('while preparing qdrant:');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `kioku: NOT_FOUND: No collection "no_such_collection" in qdrant:${qdrant.url}/: check --index (?collection=<name>).`,
    );
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^kioku: STORAGE: Qdrant at qdrant:http:\/\/127\.0\.0\.1:1\/ did not answer/);
    for (const r of [size, missing, down]) expect(r.stderr).not.toContain('    at ');
    expect(points(await index.snapshot({ allUsers: true }))).toEqual(before);
  });
});
