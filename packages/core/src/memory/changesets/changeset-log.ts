import { z } from 'zod';
import { ConflictError, CorruptDataError, NotFoundError, UnsupportedError } from '../../foundation/errors.js';
import { IdSchema, shortId } from '../../foundation/ids.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import { LIMITS } from '../../foundation/limits.js';
import { sameJson } from '../../foundation/objects.js';
import { IsoDateSchema } from '../../foundation/record-fields.js';
import { retryOnConflict } from '../../foundation/retry-on-conflict.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { Fact } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { OwnSession } from '../../store/sessions/own-session.js';
import type { SessionInfo } from '../../store/sessions/record.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { SuppressionList } from '../trust/suppression.js';
import {
  type AppliedOperation,
  AppliedOperationSchema,
  type ApplyResult,
  applyChangeset,
  ChangeConflictSchema,
  type ChangeStores,
  type RevertResult,
  revertChangeset,
} from './apply.js';
import { type ChangeOperation, type Changeset, ChangesetSchema, type FactDraft } from './changeset.js';

/** A pass's changeset and, when it was applied, what applying it did. */
export interface PassResult {
  changeset: Changeset;
  /** Absent when the changeset was only proposed (`apply: false`) or changes nothing. */
  result?: ApplyResult;
}

/**
 * A changeset as it is kept: proposed (a dry run kept for review: nothing applied yet), or applied — what
 * was written, what was not, and when.
 */
export const KeptChangesetSchema = z.object({
  changeset: ChangesetSchema,
  applied: z.array(AppliedOperationSchema),
  conflicts: z.array(ChangeConflictSchema),
  /** Absent while the changeset is only proposed. */
  appliedAt: IsoDateSchema.optional(),
  revertedAt: IsoDateSchema.optional(),
  /**
   * The record's format: 2 since operations may create knowledge documents. Records kept before carry
   * none and read as 1 (fact operations only, the same shape).
   */
  schemaVersion: z.number().int().min(1).default(1),
  /**
   * Facts of its operations the user has since forgotten (`forgetFact`): their text is gone from the
   * record (see `forgetFactsIn`), their operations stay as tombstones and are no longer revertible.
   */
  forgotten: z.array(z.object({ id: IdSchema, at: IsoDateSchema })).optional(),
});

export type KeptChangeset = z.output<typeof KeptChangesetSchema>;

/** The kept-changeset format this version writes; a newer one is refused (UNSUPPORTED), never misread. */
export const CHANGESET_SCHEMA_VERSION = 2;

/** Metadata that marks the one session per user + agent that holds its changesets. */
export const CHANGESET_SESSION_METADATA = Object.freeze({ kioku: 'changesets' });
const SESSION_TITLE = 'Kioku memory changesets';
const KEY_PREFIX = 'changeset/';

/**
 * Where changesets are kept — applied ones, so any of them can be reverted later by id, and proposed ones
 * (a dry run kept for review), so they can be applied later by id.
 *
 * Why the session store: every backend already has one (JSON, SQLite, PostgreSQL, Redis, in-memory), it
 * is durable, partitioned by user + agent, and snapshotted with the rest of a user's data — so changesets
 * work everywhere without a line of adapter code. Each user + agent gets one dedicated session (marked by
 * `CHANGESET_SESSION_METADATA`, see `isKiokuSession`) whose key-value map holds the changesets by id
 * (`changeset/<id>`). Nothing reads a session's k-v map into a prompt, a search or a tool result — facts
 * search, the fact modes and the memory tools only read the fact store, and the conversation
 * feature and the conversation log read transcripts of conversations only — so a kept changeset never
 * shows up in a memory block. The dedicated session has no transcript.
 *
 * Every change of a kept record is a read-modify-write of its k-v value with the version read (read
 * again on CONFLICT), so two app instances applying or reverting one changeset at once both leave their
 * operations in the record.
 *
 * Limits, from the session store's k-v caps: a value holds at most `LIMITS.sessionValueChars` characters,
 * so a larger changeset is split over several keys (`changeset/<id>/<generation>/<n>`, named by the
 * header `{ parts, generation }` at `changeset/<id>`; each write has a new generation, so a write that
 * loses its compare-and-set never touches the parts of the one that won); the map keeps the newest
 * `kvCap` keys (200 by default), so the oldest changesets are forgotten first, and can no longer be
 * reverted or applied, once about 200 are kept.
 */
export class ChangesetLog {
  readonly #own: OwnSession;
  readonly #sessions: SessionStore;
  readonly #partChars: number;

  constructor(sessions: SessionStore, options: { partChars?: number } = {}) {
    this.#sessions = sessions;
    this.#own = new OwnSession(sessions, 'changesets', SESSION_TITLE);
    this.#partChars = options.partChars ?? LIMITS.sessionValueChars;
  }

  /** Keep (or replace) a changeset record (written in the current format, `CHANGESET_SCHEMA_VERSION`). */
  async save(scope: Scope, record: z.input<typeof KeptChangesetSchema>): Promise<void> {
    const kept = parseOrThrow(KeptChangesetSchema, record, 'kept changeset');
    await this.#update(scope, kept.changeset.id, () => kept);
  }

  /** Keep a changeset that was produced but not applied (status `proposed`), to apply it later by id. */
  propose(scope: Scope, changeset: Changeset): Promise<void> {
    return this.save(scope, {
      changeset: { ...changeset, status: 'proposed' },
      applied: [],
      conflicts: [],
    });
  }

  /** A kept changeset, or null when there is none with this id (never kept, or evicted). */
  get(scope: Scope, id: string): Promise<KeptChangeset | null> {
    return this.#own.read(
      scope,
      async (sessionId, s) => {
        const stored = await this.#read(s, sessionId, `${KEY_PREFIX}${id}`);
        if (stored?.kept === 'unreadable') {
          throw new CorruptDataError(`The kept changeset "${id}" is not readable.`, { details: { id } });
        }
        return stored?.kept ?? null;
      },
      null,
    );
  }

  /** Every kept changeset (proposed, applied, reverted: see `changeset.status`), oldest first. */
  async list(scope: Scope): Promise<KeptChangeset[]> {
    const entries = await this.#own.read(scope, (sessionId, s) => this.#sessions.kvList(s, sessionId), []);
    const ids = entries
      .map((e) => e.key)
      .filter((k) => k.startsWith(KEY_PREFIX) && !k.slice(KEY_PREFIX.length).includes('/'))
      .map((k) => k.slice(KEY_PREFIX.length));
    const out: KeptChangeset[] = [];
    for (const id of ids) {
      const kept = await this.get(scope, id);
      if (kept) out.push(kept);
    }
    return out.sort((a, b) =>
      a.changeset.createdAt < b.changeset.createdAt
        ? -1
        : a.changeset.createdAt > b.changeset.createdAt
          ? 1
          : 0,
    );
  }

  /**
   * Apply a kept `proposed` changeset by id (see `applyChangeset`): each update and delete expects the
   * version the pass read, so a record changed since the review is a conflict (reported, left as it is).
   * The record is marked `applied` (or `partially_applied`) and can then be reverted. NOT_FOUND when it is
   * not kept; CONFLICT when it is not `proposed` (applied or reverted already).
   */
  async applyKept(
    stores: FactStore | ChangeStores,
    scope: Scope,
    id: string,
    now = new Date().toISOString(),
  ): Promise<ApplyResult> {
    const kept = await this.#require(scope, id);
    if (kept.changeset.status !== 'proposed') {
      throw new ConflictError(`The changeset "${id}" is ${kept.changeset.status}, not proposed.`, {
        details: { id, status: kept.changeset.status },
      });
    }
    return (await this.apply(stores, scope, kept.changeset, now)).result;
  }

  /**
   * Apply a changeset now (see `applyChangeset`: a record changed since the pass read it is a conflict,
   * reported and left as it is) and keep it as `applied` (or `partially_applied`), revertible by id.
   */
  async apply(
    stores: FactStore | ChangeStores,
    scope: Scope,
    changeset: Changeset,
    now = new Date().toISOString(),
  ): Promise<Required<PassResult>> {
    const allowed = await withoutSuppressed(this.#sessions, scope, changeset);
    return this.keepApplied(scope, allowed, await applyChangeset(stores, scope, allowed), now);
  }

  /** Keep a changeset the caller applied, its status set from the conflicts (`applied`, `partially_applied`). */
  async keepApplied(
    scope: Scope,
    changeset: Changeset,
    result: ApplyResult,
    now = new Date().toISOString(),
  ): Promise<Required<PassResult>> {
    const applied: Changeset = {
      ...changeset,
      status: result.conflicts.length === 0 ? 'applied' : 'partially_applied',
    };
    const mine = parseOrThrow(
      KeptChangesetSchema,
      { changeset: applied, ...result, appliedAt: now },
      'kept changeset',
    );
    const kept = await this.#update(scope, changeset.id, (current) => withApplied(current, mine));
    return { changeset: kept?.changeset ?? applied, result };
  }

  /**
   * Revert a kept changeset by id (see `revertChangeset`): NOT_FOUND when it is not kept, CONFLICT when it
   * is only proposed, nothing done when it was reverted already. The record is marked `reverted` when
   * every operation was undone. The operations undone are taken out of the record as it is when it is
   * written (read again on CONFLICT), so a concurrent apply or revert (another app instance) is kept.
   */
  async revert(
    stores: FactStore | ChangeStores,
    scope: Scope,
    id: string,
    now = new Date().toISOString(),
  ): Promise<RevertResult> {
    const kept = await this.#require(scope, id);
    if (kept.changeset.status === 'reverted') return { reverted: [], conflicts: [] };
    if (kept.changeset.status === 'proposed') {
      throw new ConflictError(`The changeset "${id}" is only proposed: there is nothing to revert.`, {
        details: { id, status: kept.changeset.status },
      });
    }
    const result = await revertChangeset(stores, scope, kept.applied);
    await this.#update(scope, id, (current) => withoutReverted(current, result.reverted, now));
    return result;
  }

  /**
   * Take the text of forgotten facts out of every kept changeset of the scope that names them (see
   * `forgetFactsIn`); each record stays, as a tombstone that says which fact was forgotten and when.
   * Returns how many records were rewritten.
   */
  async forgetFacts(scope: Scope, facts: readonly Fact[], at: string): Promise<number> {
    if (facts.length === 0) return 0;
    let rewritten = 0;
    for (const kept of await this.list(scope)) {
      const written = await this.#update(scope, kept.changeset.id, (current) =>
        current === null ? null : forgetFactsIn(current, facts, at),
      );
      if (written) rewritten++;
    }
    return rewritten;
  }

  /**
   * Read-modify-write of one kept record: `next` gets the record as stored (null when there is none, or
   * it cannot be read) and returns what to keep, or null to write nothing; the write expects the version
   * read and is tried again on CONFLICT. Returns what was written (or null).
   */
  #update(
    scope: Scope,
    id: string,
    next: (current: KeptChangeset | null) => KeptChangeset | null,
  ): Promise<KeptChangeset | null> {
    const key = `${KEY_PREFIX}${id}`;
    return this.#own.write(scope, (sessionId, s) =>
      retryOnConflict(async () => {
        const stored = await this.#read(s, sessionId, key);
        const record = next(stored?.kept === 'unreadable' ? null : (stored?.kept ?? null));
        if (record === null) return null;
        const current = { ...record, schemaVersion: CHANGESET_SCHEMA_VERSION };
        await this.#write(s, sessionId, key, JSON.stringify(current), stored);
        return record;
      }),
    );
  }

  /**
   * The record at `key` as stored: its header's version and the part keys it names, and the record (null
   * when a part is gone: evicted, or replaced by a newer write since the header was read).
   */
  async #read(s: Scope, sessionId: string, key: string): Promise<Stored | null> {
    for (let attempt = 0; ; attempt++) {
      const head = await this.#sessions.kvGet(s, sessionId, key);
      if (head === null) return null;
      const header = parseJsonOrUndefined(head.value);
      if (!isPartsHeader(header))
        return { version: head.version, partKeys: [], kept: parsed(head.value, key) };
      const partKeys = partKeysOf(key, header);
      const pieces: string[] = [];
      for (const partKey of partKeys) {
        const piece = await this.#sessions.kvGet(s, sessionId, partKey);
        if (piece === null) break;
        pieces.push(piece.value);
      }
      if (pieces.length === partKeys.length) {
        return { version: head.version, partKeys, kept: parsed(pieces.join(''), key) };
      }
      // A part is missing: evicted (the changeset is gone), or the record was written again meanwhile.
      const again = await this.#sessions.kvGet(s, sessionId, key);
      if (again?.version === head.version || attempt >= 10) {
        return { version: head.version, partKeys, kept: null };
      }
    }
  }

  /**
   * Write `json` at `key` if it is still as `stored` (absent when null): whole, or in parts under a new
   * generation named by the header, which is written last, with the version. The parts of a write that
   * lost are removed; after a write that won, the parts of the record it replaced.
   */
  async #write(s: Scope, sessionId: string, key: string, json: string, stored: Stored | null): Promise<void> {
    const expectedVersion = stored?.version ?? 0;
    if (json.length <= this.#partChars) {
      await this.#sessions.kvSet(s, sessionId, key, json, { expectedVersion });
    } else {
      const header = { parts: Math.ceil(json.length / this.#partChars), generation: shortId() };
      const partKeys = partKeysOf(key, header);
      try {
        for (const [i, partKey] of partKeys.entries()) {
          await this.#sessions.kvSet(
            s,
            sessionId,
            partKey,
            json.slice(i * this.#partChars, (i + 1) * this.#partChars),
          );
        }
        await this.#sessions.kvSet(s, sessionId, key, JSON.stringify(header), { expectedVersion });
      } catch (error) {
        for (const partKey of partKeys) await this.#sessions.kvDelete(s, sessionId, partKey);
        throw error;
      }
    }
    for (const partKey of stored?.partKeys ?? []) await this.#sessions.kvDelete(s, sessionId, partKey);
  }

  async #require(scope: Scope, id: string): Promise<KeptChangeset> {
    const kept = await this.get(scope, id);
    if (!kept) throw new NotFoundError(`No kept changeset "${id}" for this user.`, { details: { id } });
    return kept;
  }
}

/**
 * True for the session `ChangesetLog` keeps changesets in. To leave out every session Kioku keeps for
 * itself (changesets, feedback, the conversation log's watermarks), use `isKiokuSession`.
 */
export function isChangesetSession(session: Pick<SessionInfo, 'metadata'>): boolean {
  return session.metadata.kioku === CHANGESET_SESSION_METADATA.kioku;
}

/** A kept record as read: the header's version, the part keys it names, and the record. */
interface Stored {
  version: number;
  partKeys: string[];
  /** Null when a part is gone; `unreadable` when the JSON does not parse as a kept changeset. */
  kept: KeptChangeset | null | 'unreadable';
}

/** The header of a record split over several keys; records kept before generations have none. */
interface PartsHeader {
  parts: number;
  generation?: string;
}

/** More parts than a session's k-v map could ever hold: such a header is not one. */
const MAX_PARTS = 100_000;

function isPartsHeader(value: unknown): value is PartsHeader {
  if (typeof value !== 'object' || value === null || 'changeset' in value) return false;
  const { parts, generation } = value as { parts?: unknown; generation?: unknown };
  return (
    Number.isInteger(parts) &&
    (parts as number) >= 1 &&
    (parts as number) <= MAX_PARTS &&
    (generation === undefined || typeof generation === 'string')
  );
}

function partKeysOf(key: string, header: PartsHeader): string[] {
  const base = header.generation === undefined ? key : `${key}/${header.generation}`;
  return Array.from({ length: header.parts }, (_, i) => `${base}/${i}`);
}

function parsed(json: string, key: string): KeptChangeset | 'unreadable' {
  const value = parseJsonOrUndefined(json);
  const version = (value as { schemaVersion?: unknown } | undefined)?.schemaVersion;
  if (typeof version === 'number' && version > CHANGESET_SCHEMA_VERSION) {
    const id = key.slice(KEY_PREFIX.length);
    throw new UnsupportedError(
      `The kept changeset "${id}" was written by a newer Kioku (format ${version}; this one reads up to ${CHANGESET_SCHEMA_VERSION}).`,
      { details: { id, schemaVersion: version } },
    );
  }
  const result = KeptChangesetSchema.safeParse(value);
  return result.success ? result.data : 'unreadable';
}

/**
 * What a kept record becomes when `mine` (a changeset just applied) is kept over `current`: `mine` when
 * there is none or it is only proposed; when another instance applied the same changeset meanwhile, both
 * instances' operations (each was written by one of them) and the conflicts both met. Null (write
 * nothing) when `mine` applied nothing and the changeset is kept as applied already.
 */
function withApplied(current: KeptChangeset | null, mine: KeptChangeset): KeptChangeset | null {
  if (current === null || current.changeset.status === 'proposed') return mine;
  if (mine.applied.length === 0) return null;
  const applied = [...current.applied, ...mine.applied.filter((op) => !includesOp(current.applied, op))];
  const conflicts = mine.conflicts.filter((c) => current.conflicts.some((d) => d.index === c.index));
  const status = conflicts.length === 0 ? 'applied' : 'partially_applied';
  const { revertedAt: _revertedAt, ...rest } = current;
  return { ...rest, changeset: { ...current.changeset, status }, applied, conflicts };
}

/**
 * What a kept record becomes once `undone` are reverted: the operations still applied (so a second revert
 * after resolving a conflict undoes only the rest), marked `reverted` when none is left. Null when it is
 * gone or unchanged.
 */
function withoutReverted(
  current: KeptChangeset | null,
  undone: readonly AppliedOperation[],
  now: string,
): KeptChangeset | null {
  if (current === null || current.changeset.status === 'proposed') return null;
  const remaining = current.applied.filter((op) => !includesOp(undone, op));
  const unchanged = remaining.length === current.applied.length;
  if (unchanged && (remaining.length > 0 || current.changeset.status === 'reverted')) return null;
  if (remaining.length > 0) return { ...current, applied: remaining };
  return {
    ...current,
    changeset: { ...current.changeset, status: 'reverted' },
    applied: [],
    revertedAt: current.revertedAt ?? now,
  };
}

function includesOp(ops: readonly AppliedOperation[], op: AppliedOperation): boolean {
  return ops.some((other) => sameJson(other, op));
}

/**
 * The changeset without the creates and updates whose content the user asked to forget (her suppression
 * list, see `SuppressionList`), each named in the notes: whatever pass proposes it again (the dream, a
 * review applied later, extraction), a forgotten fact is not written back.
 */
async function withoutSuppressed(
  sessions: SessionStore,
  scope: Scope,
  changeset: Changeset,
): Promise<Changeset> {
  const texts = changeset.operations.map((op) =>
    op.op === 'create' || op.op === 'update' ? op.after.content : '',
  );
  if (texts.every((t) => t === '')) return changeset;
  const suppressed = await new SuppressionList(sessions).matches(scope.userId, texts);
  if (!suppressed.some(Boolean)) return changeset;
  const notes = [...(changeset.notes ?? [])];
  const operations = changeset.operations.filter((op, i) => {
    if (suppressed[i])
      notes.push(
        `Not written: the user had forgotten it (${op.op} ${(op as { after: { id: string } }).after.id}).`,
      );
    return !suppressed[i];
  });
  return { ...changeset, operations, notes };
}

/** What stands for a forgotten fact's content in a kept changeset. */
export const FORGOTTEN_CONTENT = '(forgotten)';

/**
 * A kept record without the text of `facts`: each operation on one of them keeps its kind and the fact id
 * and loses content, title, tags, metadata, event time, notes and reason (the provenance keeps only its
 * source, session and turn); the applied operations on them are dropped, so a revert can never write the
 * text back; notes that name them or quote them are dropped; `forgotten` says which and when. Null when
 * the record names none of them.
 */
export function forgetFactsIn(kept: KeptChangeset, facts: readonly Fact[], at: string): KeptChangeset | null {
  const ids = new Set(facts.map((f) => f.id));
  const quotes = facts.map((f) => f.content.slice(0, 60)).filter((q) => q.length >= 8);
  const names = (op: { op: string; after?: { id: string }; before?: { id: string } }) =>
    op.op !== 'create_document' && (ids.has(op.after?.id ?? '') || ids.has(op.before?.id ?? ''));
  const hit = kept.changeset.operations.some(names) || kept.applied.some(names);
  if (!hit) return null;
  const operations = kept.changeset.operations.map((op): ChangeOperation => {
    if (!names(op)) return op;
    const reason = 'Forgotten by the user.';
    if (op.op === 'create') return { op: 'create', after: tombstoneDraft(op.after), reason };
    if (op.op === 'update')
      return { op: 'update', before: tombstone(op.before), after: tombstoneDraft(op.after), reason };
    if (op.op === 'delete') return { op: 'delete', before: tombstone(op.before), reason };
    return op;
  });
  const notes = kept.changeset.notes?.filter(
    (note) => ![...ids].some((id) => note.includes(id)) && !quotes.some((q) => note.includes(q)),
  );
  const found = kept.changeset.operations
    .concat(kept.applied as ChangeOperation[])
    .flatMap((op) =>
      names(op)
        ? [(op as { after?: { id: string } }).after?.id ?? (op as { before: { id: string } }).before.id]
        : [],
    );
  const forgotten = [...(kept.forgotten ?? [])];
  for (const id of new Set(found)) if (!forgotten.some((f) => f.id === id)) forgotten.push({ id, at });
  const { notes: _notes, ...changeset } = kept.changeset;
  return {
    ...kept,
    changeset: { ...changeset, operations, ...(notes && notes.length > 0 ? { notes } : {}) },
    applied: kept.applied.filter((op) => !names(op)),
    forgotten,
  };
}

function tombstoneProvenance(p: Fact['provenance']): Fact['provenance'] {
  return {
    source: p.source,
    ...(p.sessionId !== undefined ? { sessionId: p.sessionId } : {}),
    ...(p.turn !== undefined ? { turn: p.turn } : {}),
  };
}

function tombstone(fact: Fact): Fact {
  const { title: _t, eventTime: _e, ...rest } = fact;
  return {
    ...rest,
    content: FORGOTTEN_CONTENT,
    tags: [],
    metadata: {},
    provenance: tombstoneProvenance(fact.provenance),
  };
}

function tombstoneDraft(draft: FactDraft): FactDraft {
  const { title: _t, eventTime: _e, ...rest } = draft;
  return {
    ...rest,
    content: FORGOTTEN_CONTENT,
    tags: [],
    metadata: {},
    provenance: tombstoneProvenance(draft.provenance),
  };
}
