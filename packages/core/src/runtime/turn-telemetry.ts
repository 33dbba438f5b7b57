import type { Attributes, Span } from '@opentelemetry/api';
import type { ThreadScope } from '../foundation/scope.js';
import type { ChatMessage, ToolCall } from '../model/messages.js';
import { ATTR, errorType } from '../telemetry/attributes.js';
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
    const start = performance.now();
    const attributes =
      turnIndex === undefined ? this.#scope : { ...this.#scope, [ATTR.turnIndex]: turnIndex };
    let failure: string | undefined;
    return withTelemetry(this.telemetry, () =>
      this.telemetry.span(SPAN_NAMES[phase], attributes, fn).catch((error: unknown) => {
        failure = errorType(error);
        throw error;
      }),
    ).finally(() => {
      this.telemetry.metrics?.turnDuration.record(secondsSince(start), {
        [ATTR.turnPhase]: phase,
        ...(failure ? { [ATTR.errorType]: failure } : {}),
      });
    });
  }

  /**
   * One memory stage, its ledger entry recorded as metrics (`kioku.stage.duration`, `kioku.stage.tokens`,
   * `kioku.stage.dropped` by reason) and on the trace: by default an event `kioku.stage` on the prepare
   * span (no span of its own: a turn has many stages); with `detail` `stages` or `store`, a span
   * `kioku.stage <name>` the store calls nest in.
   */
  async stage<T extends { entry: LedgerEntry; messages: readonly ChatMessage[] }>(
    name: string,
    prepare: Span | undefined,
    fn: () => Promise<T>,
  ): Promise<T> {
    const start = performance.now();
    const stage = stageAttributes(name);
    const telemetry = this.telemetry;
    let done: T;
    if (telemetry.stageSpans) {
      done = await telemetry.span(`kioku.stage ${name}`, stage, async (span) => {
        const out = await fn();
        if (span?.isRecording()) span.setAttributes(this.#entryAttributes(out.entry, out.messages));
        return out;
      });
    } else {
      done = await fn();
      if (prepare?.isRecording()) {
        const attributes = this.#entryAttributes(done.entry, done.messages);
        attributes[ATTR.stage] = name;
        attributes['kioku.stage.duration'] = secondsSince(start);
        prepare.addEvent('kioku.stage', attributes);
      }
    }
    const instruments = telemetry.metrics;
    if (instruments) {
      instruments.stageDuration.record(secondsSince(start), stage);
      instruments.stageTokens.record(done.entry.tokens, stage);
      countDropped(instruments, stage, done.entry);
    }
    return done;
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
  budget(prepare: Span | undefined): (ledger: Pick<TurnLedger, 'maxTokens' | 'baseTokens' | 'tools'>) => void {
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
    countDropped(instruments, stage, entry);
  }

  /** The prompt's totals on the prepare span, once every stage ran. */
  prepared(span: Span | undefined, ledger: TurnLedger, turnIndex: number, userMessage: string): void {
    if (!span?.isRecording()) return;
    span.setAttributes({
      [ATTR.turnIndex]: turnIndex,
      'kioku.prompt.tokens': ledger.totalTokens,
      'kioku.prompt.max_tokens': ledger.maxTokens,
      'kioku.recall': ledger.recall.recall,
      'kioku.recall.by': ledger.recall.by,
      ...(this.telemetry.captureContent ? { 'kioku.user_message': userMessage } : {}),
    });
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
    let dropped = 0;
    for (const item of entry.dropped) dropped += item.count ?? 1;
    const attributes: Attributes = {
      'kioku.stage.allotted_tokens': entry.allottedTokens,
      'kioku.stage.tokens': entry.tokens,
      'kioku.stage.included': entry.included,
      'kioku.stage.dropped': dropped,
    };
    if (this.telemetry.captureContent) {
      attributes['kioku.stage.content'] = messages.map((m) => m.content).join('\n');
    }
    return attributes;
  }
}

/** `kioku.stage.dropped`: one add per reason (a block may drop hundreds of items one by one). */
function countDropped(instruments: Instruments, stage: Attributes, entry: LedgerEntry): void {
  if (entry.dropped.length === 0) return;
  const byReason = new Map<string, number>();
  for (const item of entry.dropped)
    byReason.set(item.reason, (byReason.get(item.reason) ?? 0) + (item.count ?? 1));
  for (const [reason, count] of byReason)
    instruments.stageDropped.add(count, { ...stage, [ATTR.dropReason]: reason });
}

const STAGES = new Map<string, Attributes>();

/** One frozen attribute set per stage name, made once (a turn records several metrics per stage). */
function stageAttributes(name: string): Attributes {
  let attributes = STAGES.get(name);
  if (attributes === undefined) {
    attributes = Object.freeze({ [ATTR.stage]: name });
    STAGES.set(name, attributes);
  }
  return attributes;
}
