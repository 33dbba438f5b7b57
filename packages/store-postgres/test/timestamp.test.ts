import { describe, expect, it } from 'vitest';
import { isoFromPg } from '../src/timestamp.js';

// No server needed: how PostgreSQL's timestamptz text becomes core's ISO strings.
describe('isoFromPg', () => {
  it.each([
    ['2025-01-01 00:00:00+00', '2025-01-01T00:00:00.000Z'],
    ['2025-01-01 05:30:00.123+05:30', '2025-01-01T00:00:00.123Z'],
    ['2024-12-31 20:30:00.5-03:30', '2025-01-01T00:00:00.500Z'],
    ['0099-03-01 05:53:28+05:53:28', '0099-03-01T00:00:00.000Z'],
    ['0001-01-01 00:00:00+00 BC', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31 23:59:59.999+00', '9999-12-31T23:59:59.999Z'],
  ])('%s → %s', (pg, iso) => {
    expect(isoFromPg(pg)).toBe(iso);
  });

  it('the UTC shortcut agrees with the general path', () => {
    for (const frac of ['', '.1', '.12', '.123', '.1234', '.123456']) {
      for (const date of [
        '2025-01-01 00:00:00',
        '1970-01-01 00:00:00',
        '0999-06-30 23:59:59',
        '9999-12-31 23:59:59',
      ]) {
        const iso = new Date(`${date.replace(' ', 'T')}${frac.slice(0, 4)}Z`).toISOString();
        expect(isoFromPg(`${date}${frac}+00`)).toBe(iso);
        expect(isoFromPg(`${date}${frac}+00:00`)).toBe(iso);
      }
    }
  });

  it('refuses another DateStyle', () => {
    expect(() => isoFromPg('Wed Jan 01 00:00:00 2025 UTC')).toThrow(/DateStyle/);
  });
});
