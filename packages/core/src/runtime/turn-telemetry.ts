import type { Attributes, Span } from '@opentelemetry/api';
import type { ThreadScope } from '../foundation/scope.js';
import type { ChatMessage, ToolCall } from '../model/messages.js';
import { ATTR } from '../telemetry/attributes.js';
import type { Instruments } from '../telemetry/instruments.js';
import { secondsSince, type Telemetry, withTelemetry } from '../telemetry/telemetry.js';
import type { LedgerEntry, TurnLedger } from './ledger.js';

/** The phases of a turn that get a span of their own (`run` is the whole turn: `kioku.turn`). */
export type TurnPhase = 'prepare' | 'record' | 'run';

const SPAN_NAMES: Readonly<Record<TurnPhase, string>> = {
  prepare: 'kioku.prepare',
  record: 'kioku.record',
  run: 'kioku.turn',
};

/**
 * A conversation's spans and metrics: `kioku.turn` around `run`, `kioku.prepare` and `kioku.record`
 * (children of the turn, or of the app's own span when it runs the model loop itself), each memory stage
 * of prepare with its ledger entry (an event on prepare, or a span `kioku.stage <name>` with stage
 * detail; the features' work after the turn is in `kioku.record`). Holds no content unless the telemetry
 * captures it.
 */
export class TurnTelemetry {
  readonly telemetry: Telemetry;
  readonly #scope: Attributes;
  /** Per prepare span (default detail): each stage's duration (s) and, with captureContent, its text. */
  readonly #stages = new WeakMap<Span, Map<string, { duration: number; content?: string }>>();

  constructor(telemetry: Telemetry, scope: Readonly<ThreadScope>) {
    this.telemetry = telemetry;
    this.#scope = telemetry.scope(scope);
  }

  /** Run a phase of the turn in its span, with Kioku's telemetry active for the seams below. */
  phase<T>(
    phase: TurnPhase,
    turnIndex: number | undefined,
    fn: (span: Span | undefined) => Promise<T>,
  ): Promise<T> {
    const attributes =
      turnIndex === undefined ? this.#scope : { ...this.#scope, [ATTR.turnIndex]: turnIndex };
    // A span enters Kioku's telemetry with it when it lives in OpenTelemetry's context.
    const telemetry = this.telemetry;
    if (telemetry.tracer && telemetry.inContext) return this.#phase(phase, attributes, fn);
    return withTelemetry(telemetry, () => this.#phase(phase, attributes, fn));
  }

  #phase<T>(
    phase: TurnPhase,
    attributes: Attributes,
    fn: (span: Span | undefined) => Promise<T>,
  ): Promise<T> {
    const start = performance.now();
    return this.telemetry.span(SPAN_NAMES[phase], attributes, fn, {
      ended: (failure) =>
        this.telemetry.metrics?.turnDuration.record(
          secondsSince(start),
          failure ? { [ATTR.turnPhase]: phase, [ATTR.errorType]: failure } : phaseAttributes(phase),
        ),
    });
  }

  /**
   * One memory stage, its ledger entry recorded as metrics (`kioku.stage.duration`, `kioku.stage.tokens`,
   * `kioku.stage.dropped` by reason) and on the trace: by default in the prepare span's per-stage list
   * attributes (see `prepared`; no span of its own: a turn has many stages); with `detail` `stages` or
   * `store`, a span `kioku.stage <name>` the store calls nest in, with its ledger entry.
   */
  stage<T extends { entry: LedgerEntry; messages: readonly ChatMessage[] }>(
    name: string,
    prepare: Span | undefined,
    fn: () => Promise<T>,
  ): Promise<T> {
    const start = performance.now();
    const telemetry = this.telemetry;
    if (telemetry.stageSpans) {
      return telemetry.span(`kioku.stage ${name}`, stageAttributes(name), async (span) => {
        const out = await fn();
        if (span?.isRecording()) span.setAttributes(this.#entryAttributes(out.entry, out.messages));
        this.#staged(name, undefined, secondsSince(start), out);
        return out;
      });
    }
    // No span of its own: just the stage's promise, timed (a turn runs many stages).
    return fn().then((out) => {
      this.#staged(name, prepare, secondsSince(start), out);
      return out;
    });
  }

  /** A stage that ran: its metrics, and (without a span of its own) its entry kept for `prepared`. */
  #staged(
    name: string,
    prepare: Span | undefined,
    seconds: number,
    done: { entry: LedgerEntry; messages: readonly ChatMessage[] },
  ): void {
    const telemetry = this.telemetry;
    if (prepare?.isRecording()) {
      let stages = this.#stages.get(prepare);
      if (stages === undefined) {
        stages = new Map();
        this.#stages.set(prepare, stages);
      }
      stages.set(name, {
        duration: seconds,
        ...(telemetry.captureContent ? { content: contentOf(done.messages) } : {}),
      });
    }
    const instruments = telemetry.metrics;
    if (instruments) {
      const stage = stageAttributes(name);
      instruments.stageDuration.record(seconds, stage);
      instruments.stageTokens.record(done.entry.tokens, stage);
      countDropped(instruments, name, done.entry);
    }
  }

  /**
   * A stage's store reads, started before any stage runs (`PromptMiddleware.prefetch`). With stage spans,
   * a span of their own, `kioku.prefetch <name>`, so the store calls they make nest under it while they
   * overlap the others; else just the reads.
   */
  prefetch<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (!this.telemetry.stageSpans) return fn();
    return this.telemetry.span(`kioku.prefetch ${name}`, stageAttributes(name), fn);
  }

  /**
   * The budget stage, started now: counting what is paid before any memory block (system prompt, app
   * messages, user message, tool definitions). Call what it returns with the counts: they go on the
   * prepare span (or, with stage spans, on a span `kioku.stage budget`) and its duration in the metrics.
   */
  budget(
    prepare: Span | undefined,
  ): (ledger: Pick<TurnLedger, 'maxTokens' | 'baseTokens' | 'tools'>) => void {
    const stage = stageAttributes('budget');
    const start = performance.now();
    const span = this.telemetry.stageSpans
      ? this.telemetry.tracer?.startSpan('kioku.stage budget', { attributes: stage })
      : prepare;
    return (ledger) => {
      if (span?.isRecording()) {
        span.setAttributes({
          'kioku.budget.max_tokens': ledger.maxTokens,
          'kioku.budget.base_tokens': ledger.baseTokens,
          'kioku.budget.tool_tokens': ledger.tools.tokens,
          'kioku.budget.tool_definitions': ledger.tools.definitions,
        });
      }
      if (span !== prepare) span?.end();
      this.telemetry.metrics?.stageDuration.record(secondsSince(start), stage);
    };
  }

  /** A recall stage the turn's decision skipped: no span, its `not-needed` drop counted. */
  skipped(entry: LedgerEntry): void {
    const stage = stageAttributes(entry.middleware);
    const instruments = this.telemetry.metrics;
    if (!instruments) return;
    instruments.stageTokens.record(0, stage);
    countDropped(instruments, entry.middleware, entry);
  }

  /**
   * The prompt's totals on the prepare span, once every stage ran; without stage spans, every stage's
   * ledger entry too, as lists in the order the stages ran (`kioku.stages` names them; a stage the recall
   * decision skipped has duration 0).
   */
  prepared(span: Span | undefined, ledger: TurnLedger, turnIndex: number, userMessage: string): void {
    if (!span?.isRecording()) return;
    const attributes: Attributes = {
      [ATTR.turnIndex]: turnIndex,
      'kioku.prompt.tokens': ledger.totalTokens,
      'kioku.prompt.max_tokens': ledger.maxTokens,
      'kioku.recall': ledger.recall.recall,
      'kioku.recall.by': ledger.recall.by,
    };
    if (this.telemetry.captureContent) attributes['kioku.user_message'] = userMessage;
    if (!this.telemetry.stageSpans) {
      const stages = this.#stages.get(span);
      this.#stages.delete(span);
      const n = ledger.entries.length;
      const names: string[] = new Array(n);
      const tokens: number[] = new Array(n);
      const allotted: number[] = new Array(n);
      const included: number[] = new Array(n);
      const dropped: number[] = new Array(n);
      const durations: number[] = new Array(n);
      const content: string[] = new Array(n);
      for (let i = 0; i < n; i++) {
        const entry = ledger.entries[i]!;
        const stage = stages?.get(entry.middleware);
        names[i] = entry.middleware;
        tokens[i] = entry.tokens;
        allotted[i] = entry.allottedTokens;
        included[i] = entry.included;
        dropped[i] = droppedItems(entry);
        durations[i] = stage?.duration ?? 0;
        content[i] = stage?.content ?? '';
      }
      attributes['kioku.stages'] = names;
      attributes['kioku.stage.tokens'] = tokens;
      attributes['kioku.stage.allotted_tokens'] = allotted;
      attributes['kioku.stage.included'] = included;
      attributes['kioku.stage.dropped'] = dropped;
      attributes['kioku.stage.duration'] = durations;
      if (this.telemetry.captureContent) attributes['kioku.stage.content'] = content;
    }
    span.setAttributes(attributes);
  }

  /** What the whole turn did, on `kioku.turn`. */
  ran(span: Span | undefined, turn: { steps: number; answer: string; stepLimitReached: boolean }): void {
    if (!span?.isRecording()) return;
    span.setAttributes({
      'kioku.turn.steps': turn.steps,
      'kioku.turn.step_limit_reached': turn.stepLimitReached,
      ...(this.telemetry.captureContent ? { 'kioku.answer': turn.answer } : {}),
    });
  }

  /** One tool call the model made, as the gen_ai conventions name it: `execute_tool <name>`. */
  tool<T extends { isError: boolean }>(call: ToolCall, fn: () => Promise<T>): Promise<T> {
    const attributes = {
      ...this.#scope,
      [ATTR.genAiOperation]: 'execute_tool',
      [ATTR.genAiToolName]: call.name,
      [ATTR.genAiToolCallId]: call.id,
    };
    return withTelemetry(this.telemetry, () =>
      this.telemetry.span(`execute_tool ${call.name}`, attributes, async (span) => {
        const result = await fn();
        if (result.isError) span?.setAttribute(ATTR.errorType, 'tool_error');
        return result;
      }),
    );
  }

  #entryAttributes(entry: LedgerEntry, messages: readonly ChatMessage[]): Attributes {
    const attributes: Attributes = {
      'kioku.stage.allotted_tokens': entry.allottedTokens,
      'kioku.stage.tokens': entry.tokens,
      'kioku.stage.included': entry.included,
      'kioku.stage.dropped': droppedItems(entry),
    };
    if (this.telemetry.captureContent) attributes['kioku.stage.content'] = contentOf(messages);
    return attributes;
  }
}

/** Items a stage left out (an entry may stand for several). */
function droppedItems(entry: LedgerEntry): number {
  let dropped = 0;
  for (const item of entry.dropped) dropped += item.count ?? 1;
  return dropped;
}

/** A stage's block text (captureContent only). */
function contentOf(messages: readonly ChatMessage[]): string {
  return messages.map((m) => m.content).join('\n');
}

const PHASES = new Map<string, Attributes>();
const STAGES = new Map<string, Attributes>();
const DROPS = new Map<string, Attributes>();

/** An attribute set recorded on every turn, made and frozen once per key (keys come from a fixed set). */
function once(cache: Map<string, Attributes>, key: string, make: () => Attributes): Attributes {
  let attributes = cache.get(key);
  if (attributes === undefined) {
    attributes = Object.freeze(make());
    cache.set(key, attributes);
  }
  return attributes;
}

function phaseAttributes(phase: TurnPhase): Attributes {
  return once(PHASES, phase, () => ({ [ATTR.turnPhase]: phase }));
}

function stageAttributes(name: string): Attributes {
  return once(STAGES, name, () => ({ [ATTR.stage]: name }));
}

/** `kioku.stage.dropped`: one add per reason (a block may drop hundreds of items one by one). */
function countDropped(instruments: Instruments, stage: string, entry: LedgerEntry): void {
  if (entry.dropped.length === 0) return;
  const byReason = new Map<string, number>();
  for (const item of entry.dropped)
    byReason.set(item.reason, (byReason.get(item.reason) ?? 0) + (item.count ?? 1));
  for (const [reason, count] of byReason) {
    const attributes = once(DROPS, `${stage}\u0000${reason}`, () => ({
      [ATTR.stage]: stage,
      [ATTR.dropReason]: reason,
    }));
    instruments.stageDropped.add(count, attributes);
  }
}
