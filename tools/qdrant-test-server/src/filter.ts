/** Qdrant's filter semantics for the conditions this server supports; others are `Unsupported`. */

export type PointId = string | number;

export interface StoredPoint {
  id: PointId;
  vector: number[];
  payload: Record<string, unknown>;
  version: number;
}

/** A condition or request feature the test server does not implement (recorded, answered 501). */
export class Unsupported extends Error {}

/** A malformed request Qdrant would answer with 400. */
export class BadRequest extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Values at a payload path (`a.b`); arrays contribute each element, as Qdrant matches them. */
function valuesAt(payload: Obj, key: string): unknown[] {
  if (key.includes('[')) throw new Unsupported(`array paths such as "${key}"`);
  let current: unknown[] = [payload];
  for (const part of key.split('.')) {
    const next: unknown[] = [];
    for (const value of current) {
      if (isObj(value) && Object.hasOwn(value, part)) next.push(value[part]);
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

function rawAt(payload: Obj, key: string): unknown {
  let current: unknown = payload;
  for (const part of key.split('.')) {
    if (!isObj(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

function isEmptyValue(value: unknown): boolean {
  return value === undefined || value === null || (Array.isArray(value) && value.length === 0);
}

function matchValue(values: unknown[], match: Obj): boolean {
  if ('value' in match) return values.some((v) => v === match.value);
  if ('any' in match) return values.some((v) => (match.any as unknown[]).includes(v));
  if ('except' in match) {
    return values.length === 0 || values.some((v) => !(match.except as unknown[]).includes(v));
  }
  throw new Unsupported(`match ${JSON.stringify(Object.keys(match))}`);
}

function rangeMatches(values: unknown[], range: Obj): boolean {
  return values.some((v) => {
    if (typeof v !== 'number') return false;
    if (typeof range.gt === 'number' && !(v > range.gt)) return false;
    if (typeof range.gte === 'number' && !(v >= range.gte)) return false;
    if (typeof range.lt === 'number' && !(v < range.lt)) return false;
    if (typeof range.lte === 'number' && !(v <= range.lte)) return false;
    return true;
  });
}

export function normalizeId(id: PointId): string {
  return typeof id === 'number' ? String(id) : id.toLowerCase();
}

function conditionMatches(point: StoredPoint, condition: Obj): boolean {
  if ('has_id' in condition) {
    const wanted = new Set((condition.has_id as PointId[]).map(normalizeId));
    return wanted.has(normalizeId(point.id));
  }
  if ('is_empty' in condition && isObj(condition.is_empty)) {
    return isEmptyValue(rawAt(point.payload, String(condition.is_empty.key)));
  }
  if ('is_null' in condition && isObj(condition.is_null)) {
    return rawAt(point.payload, String(condition.is_null.key)) === null;
  }
  if ('key' in condition) {
    const key = String(condition.key);
    const checks = Object.keys(condition).filter((k) => k !== 'key' && condition[k] !== null);
    if (checks.length !== 1) throw new BadRequest(`a field condition needs exactly one check, got ${checks}`);
    const check = checks[0]!;
    if (check === 'match') return matchValue(valuesAt(point.payload, key), condition.match as Obj);
    if (check === 'range') return rangeMatches(valuesAt(point.payload, key), condition.range as Obj);
    if (check === 'is_empty') return isEmptyValue(rawAt(point.payload, key)) === condition.is_empty;
    if (check === 'is_null') return (rawAt(point.payload, key) === null) === condition.is_null;
    throw new Unsupported(`field condition "${check}"`);
  }
  if ('nested' in condition || 'has_vector' in condition || 'slice' in condition) {
    throw new Unsupported(`condition ${Object.keys(condition).join(',')}`);
  }
  return filterMatches(point, condition);
}

const asList = (value: unknown): Obj[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? (value as Obj[]) : [value as Obj];

/** True when the point satisfies the filter (`undefined`/`null` = every point). */
export function filterMatches(point: StoredPoint, filter: Obj | null | undefined): boolean {
  if (!filter) return true;
  for (const c of asList(filter.must)) if (!conditionMatches(point, c)) return false;
  for (const c of asList(filter.must_not)) if (conditionMatches(point, c)) return false;
  const should = asList(filter.should);
  if (should.length > 0 && !should.some((c) => conditionMatches(point, c))) return false;
  if (isObj(filter.min_should)) {
    const { conditions, min_count: minCount } = filter.min_should as { conditions: Obj[]; min_count: number };
    if (conditions.filter((c) => conditionMatches(point, c)).length < minCount) return false;
  }
  return true;
}

/** Payload values the facet counts for a key (strings, integers, booleans). */
export function facetValues(point: StoredPoint, key: string): Array<string | number | boolean> {
  const seen = new Set<string | number | boolean>();
  for (const v of valuesAt(point.payload, key)) {
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v))) {
      seen.add(v);
    }
  }
  return [...seen];
}

/** Keys of the payload's top-level fields, nested ones as `a.b` (for payload index point counts). */
export function hasPath(payload: Obj, key: string): boolean {
  return !isEmptyValue(rawAt(payload, key));
}
