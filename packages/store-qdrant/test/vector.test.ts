import { isKiokuError } from '@kioku/core';
import { VectorPointSchema, VectorQuerySchema } from '@kioku/core/store';
import { describe, expect, it } from 'vitest';
import { checkVector, parsePoint, parseQuery } from '../src/vector.js';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return isKiokuError(error) ? error.code : 'other';
  }
  return 'none';
};

// The adapter checks vectors with a loop instead of core's per-element zod schema: it must accept and
// refuse exactly what that schema does.
describe('vector checks agree with core’s schemas', () => {
  const cases: Array<[string, unknown]> = [
    ['a vector', [0.5, -1, 0, 3e-8]],
    ['one number', [1]],
    ['16,384 numbers', Array(16_384).fill(0.1)],
    ['16,385 numbers', Array(16_385).fill(0.1)],
    ['empty', []],
    ['NaN', [1, Number.NaN]],
    ['Infinity', [Number.NEGATIVE_INFINITY, 1]],
    ['strings', ['1', '2']],
    ['a hole', Array(3).fill(1, 0, 1).fill(2, 2)],
    ['not an array', { 0: 1, length: 1 }],
    ['missing', undefined],
  ];
  for (const [name, vector] of cases) {
    it(name, () => {
      const point = { id: 'p', kind: 'facts', vector };
      expect(code(() => parsePoint(point))).toBe(
        VectorPointSchema.safeParse(point).success ? 'none' : 'VALIDATION',
      );
      const query = { vector, limit: 3 };
      expect(code(() => parseQuery(query))).toBe(
        VectorQuerySchema.safeParse(query).success ? 'none' : 'VALIDATION',
      );
    });
  }

  it('parses the other fields with core’s schemas (defaults, unknown keys dropped) and copies the vector', () => {
    const vector = [1, 2];
    const point = parsePoint({ id: 'p', kind: 'facts', vector, extra: true });
    expect(point).toEqual({ id: 'p', kind: 'facts', vector: [1, 2], payload: {} });
    expect(point.vector).not.toBe(vector);
    expect(parseQuery({ vector })).toEqual({ vector: [1, 2], limit: 10 });
    expect(code(() => parsePoint({ id: '', kind: 'facts', vector }))).toBe('VALIDATION');
    expect(code(() => parseQuery({ vector, limit: 0 }))).toBe('VALIDATION');
  });

  it('names the offending element', () => {
    expect(() => checkVector([1, Number.NaN], 'vector point')).toThrow(
      'Invalid vector point: vector.1: must be a finite number',
    );
  });
});
