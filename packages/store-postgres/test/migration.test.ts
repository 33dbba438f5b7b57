import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SnapshotEnvelope } from '@kioku/core/store';
import { ManualClock } from '@kioku/core/testing';
import { createJsonStores } from '@kioku/store-json';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/index.js';
import { dropSchema, endSharedClient, freshSchema, noServer, sharedClient } from './helpers.js';

const KINDS = ['facts', 'documents', 'plans', 'working', 'sessions', 'details'] as const;

interface SnapshotStore {
  snapshot(selector: { allUsers: true }): Promise<SnapshotEnvelope<unknown>>;
  restore(snapshot: unknown): Promise<unknown>;
}

/** A snapshot's records as JSON with sorted keys, in a canonical order (backends may order partitions differently). */
function canonical(env: SnapshotEnvelope<unknown>): string[] {
  return env.records.map((r) => JSON.stringify(r, [...keysOf(r)].sort())).sort();
}

function keysOf(value: unknown, keys = new Set<string>()): Set<string> {
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      keys.add(k);
      keysOf(v, keys);
    }
  }
  return keys;
}

describe.skipIf(noServer)('backend migration', () => {
  afterAll(endSharedClient);

  it('JSON → PostgreSQL → JSON: every kind’s snapshot is unchanged', async () => {
    const clock = new ManualClock();
    const dir = await mkdtemp(path.join(tmpdir(), 'kioku-pg-migrate-'));
    const schema = freshSchema();
    try {
      const json = createJsonStores({ directory: path.join(dir, 'from'), clock });
      const alice = { userId: 'alice' };
      const bob = { userId: 'bob', agentId: 'helper' };
      for (const scope of [alice, bob]) {
        await json.facts.create(scope, {
          title: 'Tz',
          content: "It's Chicago",
          tags: ['time'],
          metadata: { a: [1] },
        });
        clock.advance(1000);
        await json.documents.create(scope, {
          title: 'Handbook',
          text: 'Vacation is 28 days.\n\nSick leave: call.',
        });
        await json.plans.create({ ...scope, threadId: 't1' }, { goal: 'Ship', steps: ['build', 'test'] });
        await json.plans.addContextNote({ ...scope, threadId: 't1' }, 'note');
        await json.working.set(scope, 'session/s1/notes', 'first draft');
        // Version 2: versions travel with the snapshot.
        await json.working.set(scope, 'session/s1/notes', 'remember this', { tags: ['x'], category: 'misc' });
        const session = await json.sessions.create(scope, { title: 'Chat' });
        await json.sessions.kvSet(scope, session.id, 'city', 'Lisbon');
        await json.sessions.transcriptAppend(scope, session.id, [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] },
        ]);
        const detail = await json.details.create(
          { ...scope, threadId: 't1' },
          { description: 'ls', content: 'a b c' },
        );
        await json.details.deactivate(scope, detail.id);
        clock.advance(1000);
      }

      const pg = createPostgresStores({ client: sharedClient(), schema, clock });
      await pg.setup();
      const back = createJsonStores({ directory: path.join(dir, 'back'), clock });
      for (const kind of KINDS) {
        const source = await (json[kind] as SnapshotStore).snapshot({ allUsers: true });
        expect(source.records.length, kind).toBeGreaterThan(0);
        await (pg[kind] as SnapshotStore).restore(JSON.parse(JSON.stringify(source)));
        const viaPg = await (pg[kind] as SnapshotStore).snapshot({ allUsers: true });
        expect(canonical(viaPg), kind).toEqual(canonical(source));
        await (back[kind] as SnapshotStore).restore(viaPg);
        const again = await (back[kind] as SnapshotStore).snapshot({ allUsers: true });
        expect(canonical(again), kind).toEqual(canonical(source));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
      await dropSchema(schema);
    }
  });
});
