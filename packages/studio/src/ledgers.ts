import {
  isKiokuError,
  KIOKU_SESSION_KEY,
  type Scope,
  type SessionInfo,
  type SessionStore,
  type TurnLedger,
} from './kioku.js';

/** The purpose that marks the session holding turn ledgers (`metadata.kioku`), so no pass reads it. */
export const LEDGER_SESSION_PURPOSE = 'turn-ledgers';

/** One recorded turn's ledger. */
export interface RecordedTurn {
  sessionId: string;
  turn: number;
  recordedAt: string;
  ledger: TurnLedger;
}

const KEY_PREFIX = 'ledger/';
/** More entries than any transcript keeps. */
const TRANSCRIPT_READ_ALL = 100_000;
const keyOf = (sessionId: string, turn: number) =>
  `${KEY_PREFIX}${sessionId}/${String(turn).padStart(6, '0')}`;

/**
 * The ledgers of a user's recorded turns (what each turn's prompt held, token by token), kept where Kioku
 * keeps its own state: the k-v map of one dedicated session per user + agent, marked
 * `metadata.kioku = 'turn-ledgers'` (so the dream's conversation log and apps' session lists skip it),
 * one key per turn. The session store's k-v cap (200 by default, oldest out first) bounds it to the user's
 * latest turns. A ledger holds counts, ids and the recall decision, never message text: the recall cues
 * (words of the user's message) are left out. `forgetSession` removes the session's keys; `forgetUser`
 * erases the dedicated session with the rest.
 */
export class TurnLedgerLog {
  readonly #sessions: SessionStore;
  readonly #now: () => Date;

  constructor(sessions: SessionStore, options: { now?: () => Date } = {}) {
    this.#sessions = sessions;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Keep a turn's ledger (`TurnResult.ledger`, `PreparedTurn.ledger`) once the turn is recorded. `turn` is
   * the turn's index (`PreparedTurn.turnIndex`); without it, the index of the transcript's last user
   * message, counted as the conversation counts turns.
   */
  async record(scope: Scope, sessionId: string, ledger: TurnLedger, turn?: number): Promise<RecordedTurn> {
    const base = baseScope(scope);
    const index = turn ?? (await this.#lastTurn(base, sessionId));
    const { cues: _cues, ...recall } = ledger.recall;
    const entry: RecordedTurn = {
      sessionId,
      turn: index,
      recordedAt: this.#now().toISOString(),
      ledger: { ...ledger, recall },
    };
    const own = await this.#find(base, true);
    await this.#sessions.kvSet(base, own!, keyOf(sessionId, index), JSON.stringify(entry));
    return entry;
  }

  async #lastTurn(scope: Scope, sessionId: string): Promise<number> {
    const transcript = await this.#sessions.transcriptReadLast(scope, sessionId, TRANSCRIPT_READ_ALL);
    return Math.max(0, transcript.filter((e) => e.role === 'user').length - 1);
  }

  /** The session's recorded turns, oldest first. */
  async list(scope: Scope, sessionId: string): Promise<RecordedTurn[]> {
    const base = baseScope(scope);
    const own = await this.#find(base, false);
    if (own === undefined) return [];
    const prefix = `${KEY_PREFIX}${sessionId}/`;
    const turns: RecordedTurn[] = [];
    for (const entry of await this.#readAll(base, own)) {
      if (!entry.key.startsWith(prefix)) continue;
      const parsed = parse(entry.value);
      if (parsed) turns.push(parsed);
    }
    return turns.sort((a, b) => a.turn - b.turn);
  }

  /** The user's (+ agent's) last recorded turns over every session, newest first. */
  async latest(scope: Scope, limit: number): Promise<RecordedTurn[]> {
    const base = baseScope(scope);
    const own = await this.#find(base, false);
    if (own === undefined) return [];
    const turns: RecordedTurn[] = [];
    for (const entry of await this.#readAll(base, own)) {
      const parsed = entry.key.startsWith(KEY_PREFIX) ? parse(entry.value) : undefined;
      if (parsed) turns.push(parsed);
    }
    return turns.sort((a, b) => b.recordedAt.localeCompare(a.recordedAt)).slice(0, limit);
  }

  /** Remove a session's ledgers (when the session is forgotten); returns how many. */
  async forgetSession(scope: Scope, sessionId: string): Promise<number> {
    const base = baseScope(scope);
    const own = await this.#find(base, false);
    if (own === undefined) return 0;
    const prefix = `${KEY_PREFIX}${sessionId}/`;
    let removed = 0;
    for (const entry of await this.#readAll(base, own)) {
      if (entry.key.startsWith(prefix) && (await this.#sessions.kvDelete(base, own, entry.key))) removed++;
    }
    return removed;
  }

  async #readAll(scope: Scope, own: string) {
    try {
      return await this.#sessions.kvList(scope, own);
    } catch (error) {
      if (isKiokuError(error, 'NOT_FOUND')) return [];
      throw error;
    }
  }

  /** The dedicated session; created on the first record. Two creators at once settle on the oldest. */
  async #find(scope: Scope, create: boolean): Promise<string | undefined> {
    const mine = (list: SessionInfo[]) =>
      list.find((s) => s.metadata[KIOKU_SESSION_KEY] === LEDGER_SESSION_PURPOSE);
    const found = mine(await this.#sessions.list(scope));
    if (found || !create) return found?.id;
    const created = await this.#sessions.create(scope, {
      storeTypes: ['kioku_turn_ledgers'],
      title: 'Kioku turn ledgers',
      metadata: { [KIOKU_SESSION_KEY]: LEDGER_SESSION_PURPOSE },
    });
    const oldest = mine(await this.#sessions.list(scope))!;
    if (oldest.id !== created.id) await this.#sessions.delete(scope, created.id);
    return oldest.id;
  }
}

function baseScope(scope: Scope): Scope {
  return scope.agentId === undefined
    ? { userId: scope.userId }
    : { userId: scope.userId, agentId: scope.agentId };
}

function parse(text: string): RecordedTurn | undefined {
  try {
    const value = JSON.parse(text) as RecordedTurn;
    return typeof value.turn === 'number' && value.ledger && Array.isArray(value.ledger.entries)
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}
