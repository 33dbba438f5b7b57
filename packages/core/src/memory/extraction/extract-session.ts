import { NotFoundError } from '../../foundation/errors.js';
import { splitTurns } from '../../runtime/transcript-turns.js';
import type { PassResult } from '../changesets/changeset-log.js';
import { extractBatch } from './batch.js';
import { type Exchange, lastExchange } from './exchange.js';
import { type ExtractOptions, extractAndStoreFacts } from './extract.js';

export interface ExtractSessionOptions extends Omit<ExtractOptions, 'messages' | 'turn' | 'sessionId'> {
  sessionId: string;
  /**
   * Exchanges read per model call (`extractBatch`); 1 runs the per-turn path (`extractAndStoreFacts`,
   * one or two calls per turn). Default `SESSION_BATCH_DEFAULT` (measured by `pnpm bench:lifecycle`).
   */
  batch?: number;
  /** Called after each turn (or batch) with how many turns are done and how many there are. */
  onProgress?: (done: number, total: number) => void;
}

/** Exchanges per call when a stored session is extracted: the bench:lifecycle figure (README). */
export const SESSION_BATCH_DEFAULT = 8;

/**
 * Extraction over every turn of a stored session, oldest first (each turn's facts name it in their
 * provenance), reading only each turn's user message and final answer: `batch` turns per model call, each
 * batch's changeset applied once. NOT_FOUND when the session is not the user's. The results of the calls
 * that proposed anything.
 */
export async function extractSession(options: ExtractSessionOptions): Promise<PassResult[]> {
  const { sessionId, onProgress, batch: size = SESSION_BATCH_DEFAULT, ...rest } = options;
  const scope = {
    userId: options.scope.userId,
    ...(options.scope.agentId ? { agentId: options.scope.agentId } : {}),
  };
  if (!(await options.stores.sessions.get(scope, sessionId))) {
    throw new NotFoundError(`Session "${sessionId}" is not one of user "${scope.userId}"'s sessions.`, {
      details: { sessionId },
    });
  }
  const entries = await options.stores.sessions.transcriptReadLast(scope, sessionId, TRANSCRIPT_READ_ALL);
  const { turns } = splitTurns(entries);
  const results: PassResult[] = [];
  const keep = (result: PassResult) => {
    if (result.changeset.operations.length > 0) results.push(result);
  };
  if (size <= 1) {
    for (const [turn, messages] of turns.entries()) {
      options.signal?.throwIfAborted();
      keep(await extractAndStoreFacts({ ...rest, scope, sessionId, turn, messages }));
      onProgress?.(turn + 1, turns.length);
    }
    return results;
  }
  const exchanges: Array<{ turn: number; exchange: Exchange }> = [];
  for (const [turn, messages] of turns.entries()) {
    const exchange = lastExchange(messages);
    if (exchange) exchanges.push({ turn, exchange });
  }
  for (let i = 0; i < exchanges.length; i += size) {
    options.signal?.throwIfAborted();
    const chunk = exchanges.slice(i, i + size);
    keep(await extractBatch({ ...rest, scope, sessionId, exchanges: chunk }));
    onProgress?.(chunk.at(-1)!.turn + 1, turns.length);
  }
  if (exchanges.length === 0) onProgress?.(turns.length, turns.length);
  return results;
}

/** More transcript entries than a session keeps (the store's largest read). */
const TRANSCRIPT_READ_ALL = 100_000;
