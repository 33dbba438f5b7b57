import type { Fact } from './record.js';

// Listed here, not derived from the schemas: a field added to `FactSchema` and not checked below makes
// every such fact fall back to the schema (slower, still correct), never pass unchecked.
const FACT_KEYS = new Set([
  'id',
  'userId',
  'agentId',
  'title',
  'content',
  'category',
  'tags',
  'metadata',
  'provenance',
  'eventTime',
  'createdAt',
  'updatedAt',
  'version',
]);
const PROVENANCE_KEYS = new Set(['source', 'sessionId', 'turn', 'toolName', 'sourceIds', 'note']);
const SOURCES = new Set(['user', 'assistant', 'tool', 'extraction', 'enrichment', 'consolidation', 'import']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const optionalString = (value: unknown) => value === undefined || typeof value === 'string';
const isStrings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * A fact read back alone from a store that keeps facts as JSON (a record backend's `get`), when the JSON
 * has a fact's exact shape: every field of the right type, nothing else (no quarantine marks either). Else
 * undefined, and `FactSchema` decides (it fills defaults, strips, or names what is wrong).
 *
 * Why not `FactSchema` every time: the fact was checked against it when written, and its refinements
 * (id and date patterns, lengths, the metadata size) cost ~5 µs of a ~15 µs read, a third of a `get`.
 * This keeps what a caller relies on — the types — and turns a row of the wrong shape into
 * CorruptDataError as before; a row of the right shape that breaks a rule (hand-edited) is returned as
 * the native SQL stores return theirs, unchecked. A partition read whole is still checked by the schema.
 */
export function factOfShape(value: unknown): Fact | undefined {
  if (!isObject(value)) return undefined;
  for (const key in value) if (!FACT_KEYS.has(key)) return undefined;
  const f = value;
  const ok =
    typeof f.id === 'string' &&
    typeof f.userId === 'string' &&
    typeof f.content === 'string' &&
    typeof f.category === 'string' &&
    typeof f.createdAt === 'string' &&
    typeof f.updatedAt === 'string' &&
    Number.isSafeInteger(f.version) &&
    (f.version as number) >= 1 &&
    optionalString(f.agentId) &&
    optionalString(f.title) &&
    optionalString(f.eventTime) &&
    isStrings(f.tags) &&
    isObject(f.metadata) &&
    isObject(f.provenance);
  if (!ok) return undefined;
  const p = f.provenance as Record<string, unknown>;
  for (const key in p) if (!PROVENANCE_KEYS.has(key)) return undefined;
  const provenanceOk =
    SOURCES.has(p.source as string) &&
    optionalString(p.sessionId) &&
    optionalString(p.toolName) &&
    optionalString(p.note) &&
    (p.turn === undefined || Number.isSafeInteger(p.turn)) &&
    (p.sourceIds === undefined || isStrings(p.sourceIds));
  return provenanceOk ? (f as unknown as Fact) : undefined;
}
