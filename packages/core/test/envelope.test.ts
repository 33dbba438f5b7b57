import { describe, expect, it } from 'vitest';
import { parseEnvelope } from '../src/adapter.js';
import { UnsupportedError, ValidationError } from '../src/index.js';
import { InMemoryFactStore } from '../src/store/facts/memory.js';
import { FactSchema } from '../src/store/facts/record.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../src/store/snapshot/envelope.js';
import { ManualClock } from '../src/testing.js';

describe('snapshot envelopes', () => {
  it('carries format, kind, version, selector and records', async () => {
    const store = new InMemoryFactStore({ clock: new ManualClock(Date.UTC(2025, 5, 1)) });
    await store.create({ userId: 'u1' }, { content: 'likes tea' });
    const snapshot = await store.snapshot({ userId: 'u1' });
    expect(snapshot).toMatchObject({
      format: 'kioku.snapshot',
      schemaVersion: SNAPSHOT_SCHEMA_VERSION,
      kind: 'facts',
      createdAt: '2025-06-01T00:00:00.000Z',
      selector: { userId: 'u1' },
    });
    expect(snapshot.records).toHaveLength(1);
    // A snapshot survives JSON and parses back to the same records.
    expect(parseEnvelope('facts', FactSchema, JSON.parse(JSON.stringify(snapshot))).records).toEqual(
      snapshot.records,
    );
  });

  it('rejects an unknown version as unsupported and a wrong kind as invalid', () => {
    const base = {
      format: 'kioku.snapshot',
      kind: 'facts',
      createdAt: new Date().toISOString(),
      selector: { allUsers: true },
      records: [],
    };
    expect(() => parseEnvelope('facts', FactSchema, { ...base, schemaVersion: 99 })).toThrow(
      UnsupportedError,
    );
    expect(() => parseEnvelope('plans', FactSchema, { ...base, schemaVersion: 1 })).toThrow(ValidationError);
    expect(() =>
      parseEnvelope('facts', FactSchema, { ...base, schemaVersion: 1, records: [{ id: 'x' }] }),
    ).toThrow(/records\.0/);
    expect(() => parseEnvelope('facts', FactSchema, null)).toThrow(ValidationError);
  });
});
