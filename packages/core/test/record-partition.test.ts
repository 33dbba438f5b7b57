import { describe, expect, it } from 'vitest';
import { RecordPartition } from '../src/store/backend/record-partition.js';
import { seededRandom } from './seeded-random.js';

interface Row {
  id: string;
  at: number;
}

// Newest first, then id: a total order.
const newestFirst = (a: Row, b: Row) => b.at - a.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

describe('RecordPartition sorted orders', () => {
  it('stay equal to a full sort through random puts, replacements and deletes', () => {
    const random = seededRandom(11);
    const next = (n: number) => Math.floor(random() * n);
    const partition = new RecordPartition<Row>({ idOf: (r) => r.id, orders: { newest: newestFirst } });
    for (let i = 0; i < 50; i++) partition.put({ id: `r${i}`, at: next(20) });
    expect([...partition.sorted('newest')]).toEqual([...partition.records.values()].sort(newestFirst));
    for (let step = 0; step < 2000; step++) {
      const id = `r${next(80)}`;
      if (next(4) === 0) partition.delete(id);
      else partition.put({ id, at: next(30) }, { moveToEnd: next(2) === 0 });
      const expected = [...partition.records.values()].sort(newestFirst);
      expect([...partition.sorted('newest')]).toEqual(expected);
      // A page by position, as the fact block reads it.
      const from = next(expected.length + 2);
      expect(partition.sorted('newest').slice(from, from + 7)).toEqual(expected.slice(from, from + 7));
    }
  });

  it('refuses an order the spec does not name', () => {
    expect(() => new RecordPartition<Row>({ idOf: (r) => r.id }).sorted('newest')).toThrow(/No order/);
  });
});
