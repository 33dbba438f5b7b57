import type { Scope } from '../../foundation/scope.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import { EMPTY_RESULT, type PromptMiddleware } from '../../runtime/middleware.js';
import { defaultTokenizer, type Tokenizer } from '../../tokens/tokenizer.js';
import type { BackgroundQueue, JobOutcome } from '../background/queue.js';
import { lastExchange } from './exchange.js';
import { ExtractionOutbox, type ExtractionOutboxOptions } from './outbox.js';
import { type ExtractionTrigger, resolveTrigger } from './trigger.js';

export const EXTRACTION_MIDDLEWARE = 'extraction';

export interface ExtractionFeatureOptions extends ExtractionOutboxOptions {
  /** Where extraction runs, after the reply (KiokuBuilder hands its queue). */
  background: BackgroundQueue;
  /** When a session's new turns are extracted (see `EXTRACTION_TRIGGER_DEFAULTS`). */
  trigger?: ExtractionTrigger;
  /** The outbox to drain (default one over `stores`; the builder shares its own with `runPending`). */
  outbox?: ExtractionOutbox;
  tokenizer?: Tokenizer;
}

interface SessionState {
  scope: Scope;
  sessionId: string;
  turns: number;
  tokens: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** A drain of the session is queued and has not started yet (it will read every turn recorded by then). */
  queued: boolean;
}

/**
 * Extraction of what the user says, after the reply and never before it. Each recorded turn is already
 * the work to do (the transcript is the outbox, see `ExtractionOutbox`): the turn's append marks its session
 * pending (`MemoryFeature.outbox`), and once a session has `trigger.turns` new turns, or `trigger.tokens` tokens of them, or has been
 * quiet for `trigger.idleMs`, a job on the background queue drains it: its turns past the watermark are
 * extracted in one batched call per pass (`extractPendingTurns`: the user messages and final answers only,
 * never memory blocks, tool results or the system prompt), reconciled with the user's similar facts in the
 * same call, and applied as kept changesets.
 * `Kioku.flush()` and `close()` drain every session with new turns at once. A failure is reported by the
 * queue and leaves the turns pending; a process that dies leaves them for the next drain, by any instance.
 */
export function extraction(options: ExtractionFeatureOptions): MemoryFeature {
  const { background, trigger, outbox: given, tokenizer = defaultTokenizer, ...rest } = options;
  const outbox = given ?? new ExtractionOutbox(rest);
  const when = resolveTrigger(trigger);
  const sessions = new Map<string, SessionState>();

  const schedule = (state: SessionState) => {
    if (state.timer) clearTimeout(state.timer);
    state.timer = undefined;
    state.turns = 0;
    state.tokens = 0;
    if (state.queued) return;
    state.queued = true;
    const accepted = background.enqueue({
      kind: 'extraction',
      scope: state.scope,
      run: async (signal) => {
        state.queued = false;
        const drain = await outbox.drainSession(state.scope, state.sessionId, { signal });
        if (drain.error !== undefined && drain.results.length === 0) throw drain.error;
        const last = drain.results.at(-1);
        const outcome: JobOutcome = last
          ? { changeset: last.changeset, ...(last.result ? { result: last.result } : {}) }
          : {};
        return outcome;
      },
    });
    // Refused (the queue is full or closed): the turns stay pending in the store for the next drain.
    if (!accepted) state.queued = false;
  };

  background.onFlush(() => {
    for (const state of sessions.values()) if (state.turns > 0 || state.timer) schedule(state);
  });

  const middleware: PromptMiddleware = {
    name: EXTRACTION_MIDDLEWARE,
    placement: 'system',
    async inject() {
      return EMPTY_RESULT;
    },
    async afterTurn(ctx) {
      const scope = {
        userId: ctx.scope.userId,
        ...(ctx.scope.agentId !== undefined ? { agentId: ctx.scope.agentId } : {}),
      };
      const key = `${scope.userId}\u0000${scope.agentId ?? ''}\u0000${ctx.sessionId}`;
      let state = sessions.get(key);
      if (!state) {
        state = { scope, sessionId: ctx.sessionId, turns: 0, tokens: 0, timer: undefined, queued: false };
        sessions.set(key, state);
      }
      const exchange = lastExchange(ctx.messages);
      state.turns++;
      if (exchange) state.tokens += tokenizer.count(`${exchange.user}\n${exchange.answer ?? ''}`);
      if (state.turns >= when.turns || state.tokens >= when.tokens) {
        schedule(state);
        return;
      }
      if (state.timer) clearTimeout(state.timer);
      if (when.idleMs !== false) {
        const current = state;
        current.timer = setTimeout(() => schedule(current), when.idleMs);
        current.timer.unref?.();
      }
    },
  };
  // Every turn is appended with the session marked pending (the outbox), so any worker finds it.
  return { name: EXTRACTION_MIDDLEWARE, middleware, outbox: true };
}
