import { describe, expect, it } from 'vitest';
import { InMemoryRecordBackend } from '../src/adapter.js';
import { diff } from '../src/store/backend/record-backend.js';

const r = (key: string, json = `"${key}"`) => ({ key, json });
const ref = { kind: 'facts', userId: 'u' } as const;

describe('the record-level seam', () => {
  it('diff writes only what changed, in place, and appends from the first record out of order', () => {
    expect(diff([r('a'), r('b'), r('c')], [r('a'), r('b', '"B"'), r('c')])).toEqual({
      put: [{ key: 'b', json: '"B"', append: false }],
      delete: [],
    });
    // `a` moved to the end (an update that moves a key last), `d` is new, `b` is gone.
    expect(diff([r('a'), r('b'), r('c')], [r('c'), r('a'), r('d')])).toEqual({
      put: [
        { key: 'c', json: '"c"', append: true },
        { key: 'a', json: '"a"', append: true },
        { key: 'd', json: '"d"', append: true },
      ],
      delete: ['b'],
    });
    expect(diff([r('a')], [r('a')])).toEqual({ put: [], delete: [] });
  });

  it('apply refuses a stale partition version and writes nothing; appended records go last in order', async () => {
    const backend = new InMemoryRecordBackend();
    expect(
      await backend.apply(ref, 0, {
        put: [
          { ...r('a'), append: true },
          { ...r('b'), append: true },
        ],
        delete: [],
      }),
    ).toBe(true);
    expect(await backend.apply(ref, 0, { put: [{ ...r('x'), append: true }], delete: [] })).toBe(false);
    expect(await backend.apply(ref, 1, { put: [{ ...r('a', '"A"'), append: true }], delete: [] })).toBe(true);
    expect(await backend.scan(ref)).toEqual({ version: 2, records: [r('b'), r('a', '"A"')] });
    expect(await backend.listPartitions('facts', 'u')).toEqual([ref]);
    expect(await backend.listPartitions('facts', 'other')).toEqual([]);
  });
});
