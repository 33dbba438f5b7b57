/**
 * The raw-driver floor of a `bench:turn` turn: the reads, searches and writes the turn needs, issued as
 * hand-written SQL straight through the driver (better-sqlite3, postgres.js) on the same database the stores
 * wrote, after the timed turns. No prompt is built and rows are decoded only where a write needs them (the
 * recalled ids): what a turn costs above this is Kioku's. One file per schema: `turn-floor-records.ts`
 * (store-sqlite's records table), `turn-floor-postgres.ts`. Reads, searches and writes are timed apart (`Floor.parts`).
 *
 * Chat workload, per turn: the fact block's mark (the partition's fact count and newest fact: the block is
 * reused while they stay), the working-memory inventories of the session and of the patrol findings, the
 * transcript's last `window` entries, and one exchange appended (two entries, the cap trimmed) in one
 * transaction.
 *
 * Full workload (every feature), per turn:
 * - reads: the fact count and the newest `blockFacts` facts (as many as the block showed: the `relevant`
 *   mode stores a fact every turn, so the block is built every turn); the knowledge documents with their
 *   text (full-text injection lists them all); the thread's plan; fact recall's recalled ids; the two
 *   working-memory inventories; the transcript tail (`window` entries);
 * - searches: two ranked lexical searches of the user message's terms (core's analyzer: the terms the
 *   stores index) with the features' limits, recall's (8) and relevant memory's (20), and the detail search
 *   (limit 20);
 * - writes: the exchange appended (cap trimmed), the recalled ids written back, and the exchange stored as a
 *   new fact with its search terms (the `relevant` mode's auto-store; the store's triggers index it).
 * A ranked search is one statement: on SQLite FTS5's `bm25()` order (`ORDER BY rank LIMIT n`, rows read by
 * the join), on PostgreSQL the rows the GIN index on the facts' terms finds, in `ts_rank` order of an OR
 * query of the terms (newest first among equals). The stores rank as core ranks (BM25+ and a feedback round
 * over a bounded candidate pool): more statements, but on common words far fewer rows scored than a
 * one-statement ranked search, which scores every row holding any of the words.
 */
import { englishAnalyzer, factSearchText } from '@kioku/core/adapter';
import { percentile, round } from './util.js';

export type FloorWorkload = 'chat' | 'full';

export interface FloorTarget {
  workload: FloorWorkload;
  userId: string;
  sessionId: string;
  /** The plan's thread (the conversation's). */
  threadId: string;
  /** Transcript entries read per turn (the replay's window). */
  window: number;
  /** The store's transcript cap. */
  cap: number;
  /** Facts the fact block showed (full workload): the newest this many are read. */
  blockFacts: number;
  /** Search limits: fact recall's `maxResults`, relevant memory's `min(100, 4 × maxMemories)`. */
  recallLimit: number;
  relevantLimit: number;
  /** The user message and the answer of floor turn `k`. */
  message(k: number): string;
  answer(k: number): string;
}

export interface Floor {
  p50: number;
  p95: number;
  /** The turn's reads, searches and writes apart (each statement group timed on its own). */
  parts: Record<FloorPart, { p50: number; p95: number }>;
}

export type FloorPart = 'reads' | 'searches' | 'writes';
const PARTS: readonly FloorPart[] = ['reads', 'searches', 'writes'];

/** Ends a part of a floor turn: the time since the previous lap (or the turn's start) goes to `part`. */
export type Lap = (part: FloorPart) => void;

/** The session k-v entry fact recall keeps its recalled ids in. */
export const RECALLED_KEY = 'kioku.recall.injected';

/** Ids fact recall keeps in that entry before it seals them into a chunk of their own (core's `HEAD_IDS`). */
const RECALLED_HEAD_IDS = 1_000;

/**
 * The recalled-ids entry as a floor turn reads and writes it raw: a JSON array of the newest ids, or
 * `{"sealed": [...], "ids": [...]}` once older ids were sealed into chunks. The floor reads and writes the
 * head only (the newest RECALLED_HEAD_IDS ids); the tracker also writes one chunk per 1,000 ids and reads
 * each once, which this floor leaves out.
 */
export class RecalledHead {
  #sealed: unknown[] = [];
  #ids = new Set<string>();

  read(value: string | undefined): void {
    const parsed: unknown = value === undefined ? [] : JSON.parse(value);
    const head = Array.isArray(parsed)
      ? { sealed: [], ids: parsed }
      : (parsed as { sealed: unknown[]; ids: string[] });
    this.#sealed = head.sealed;
    this.#ids = new Set(head.ids);
  }

  add(id: string): void {
    this.#ids.add(id);
  }

  value(): string {
    const ids = [...this.#ids].slice(-RECALLED_HEAD_IDS);
    return this.#sealed.length === 0 ? JSON.stringify(ids) : JSON.stringify({ sealed: this.#sealed, ids });
  }
}

/** The category and tags the `relevant` mode stores an exchange with. */
export const INTERACTION = { category: 'episodic/interactions', tags: ['interaction'] } as const;

/** The analyzed terms of a message (each once): what the stores' search columns hold. */
export function searchTerms(text: string): string[] {
  return [...new Set(englishAnalyzer.terms(text))];
}

/** An FTS5 MATCH on the search terms column: any of `terms`, each quoted. */
export function ftsAny(terms: readonly string[]): string {
  return `search_terms : (${terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ')})`;
}

/** The fact the `relevant` mode stores for an exchange with its search terms. */
export function interactionFact(userId: string, id: string, message: string, answer: string) {
  const at = new Date().toISOString();
  const fact = {
    id,
    userId,
    content: `User: ${message}\nAssistant: ${answer}`,
    category: INTERACTION.category,
    tags: [...INTERACTION.tags],
    metadata: {},
    provenance: { source: 'assistant' },
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  const terms = englishAnalyzer.terms(factSearchText(fact));
  return { fact, terms: terms.join(' '), length: terms.length };
}

/** Times `turns` calls of `turn` (its index given, and `lap` to time its parts), p50 and p95 in ms. */
export async function timeTurns(turns: number, turn: (k: number, lap: Lap) => unknown): Promise<Floor> {
  const times: number[] = [];
  const parts = new Map<FloorPart, number[]>(PARTS.map((part) => [part, []]));
  for (let k = 0; k < turns; k++) {
    const start = performance.now();
    let last = start;
    const spent = new Map<FloorPart, number>();
    await turn(k, (part) => {
      const now = performance.now();
      spent.set(part, (spent.get(part) ?? 0) + now - last);
      last = now;
    });
    times.push(performance.now() - start);
    for (const part of PARTS) parts.get(part)!.push(spent.get(part) ?? 0);
  }
  return {
    ...quantiles(times),
    parts: Object.fromEntries([...parts].map(([part, t]) => [part, quantiles(t)])) as Floor['parts'],
  };
}

function quantiles(times: number[]): { p50: number; p95: number } {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 50), 3), p95: round(percentile(sorted, 95), 3) };
}
