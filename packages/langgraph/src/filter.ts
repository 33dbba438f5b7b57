/**
 * LangGraph's search filter: each key of the filter names a top-level field of the item's value, matched
 * exactly or with the operators `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$in`, `$nin` (the semantics of
 * LangGraph's own stores).
 */
export function matchesFilter(
  value: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, wanted]) => compare(value[field], wanted));
}

function isOperators(wanted: unknown): wanted is Record<string, unknown> {
  return (
    typeof wanted === 'object' &&
    wanted !== null &&
    !Array.isArray(wanted) &&
    Object.keys(wanted).some((k) => k.startsWith('$'))
  );
}

function compare(actual: unknown, wanted: unknown): boolean {
  if (!isOperators(wanted)) return actual === wanted;
  return Object.keys(wanted)
    .filter((op) => op.startsWith('$'))
    .every((op) => {
      const operand = wanted[op];
      switch (op) {
        case '$eq':
          return actual === operand;
        case '$ne':
          return actual !== operand;
        case '$gt':
          return Number(actual) > Number(operand);
        case '$gte':
          return Number(actual) >= Number(operand);
        case '$lt':
          return Number(actual) < Number(operand);
        case '$lte':
          return Number(actual) <= Number(operand);
        case '$in':
          return Array.isArray(operand) && operand.includes(actual);
        case '$nin':
          return !Array.isArray(operand) || !operand.includes(actual);
        default:
          return false;
      }
    });
}
