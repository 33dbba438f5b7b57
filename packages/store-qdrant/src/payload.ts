import type { Scope } from '@kioku/core';

/**
 * The payload fields Kioku writes on every point. The caller's own payload is kept whole under
 * `data`, so it can never overwrite a scope field; payload filters address `data.<key>`.
 */
export const FIELDS = Object.freeze({
  id: 'kioku_id',
  kind: 'kind',
  userId: 'user_id',
  agentId: 'agent_id',
  model: 'model',
  data: 'data',
});

/** Keyword payload indexes `setup()` creates: the scope fields (user as the tenant), kind and model. */
export const INDEXED_FIELDS: ReadonlyArray<{ field: string; tenant?: boolean }> = Object.freeze([
  { field: FIELDS.userId, tenant: true },
  { field: FIELDS.agentId },
  { field: FIELDS.kind },
  { field: FIELDS.model },
]);

type Condition = Record<string, unknown>;

export interface QdrantFilter {
  must: Condition[];
  must_not?: Condition[];
}

/**
 * The conditions that confine an operation to one partition: this user, and this agent — or, for a
 * scope without an agent, points that have no agent (`is_empty`), never all of the user's agents.
 */
export function scopeConditions(scope: Pick<Scope, 'userId' | 'agentId'>): Condition[] {
  return [
    { key: FIELDS.userId, match: { value: scope.userId } },
    scope.agentId === undefined
      ? { is_empty: { key: FIELDS.agentId } }
      : { key: FIELDS.agentId, match: { value: scope.agentId } },
  ];
}

export function scopeFilter(
  scope: Pick<Scope, 'userId' | 'agentId'>,
  options: {
    kind?: string | undefined;
    ids?: string[];
    payload?: Record<string, string | number | boolean> | undefined;
    exceptModel?: string | undefined;
  } = {},
): QdrantFilter {
  const must = scopeConditions(scope);
  if (options.kind !== undefined) must.push({ key: FIELDS.kind, match: { value: options.kind } });
  if (options.ids) must.push({ has_id: options.ids });
  for (const [key, value] of Object.entries(options.payload ?? {})) {
    must.push({ key: `${FIELDS.data}.${key}`, match: { value } });
  }
  return options.exceptModel === undefined
    ? { must }
    : { must, must_not: [{ key: FIELDS.model, match: { value: options.exceptModel } }] };
}
