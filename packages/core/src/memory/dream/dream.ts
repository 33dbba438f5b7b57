import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { isKiokuError } from '../../foundation/errors.js';
import type { Scope } from '../../foundation/scope.js';
import type { ChatModel } from '../../model/chat-model.js';
import { UsageLedger } from '../../model/structured.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import { inPass } from '../../telemetry/telemetry.js';
import type { ApplyResult } from '../changesets/apply.js';
import type { Changeset } from '../changesets/changeset.js';
import { ChangesetLog } from '../changesets/changeset-log.js';
import { changesetAttributes } from '../changesets/pass-telemetry.js';
import { FeedbackLog } from '../feedback/feedback-log.js';
import type { FeedbackSignal } from '../feedback/signal.js';
import { consolidate } from './consolidate.js';
import type { ConversationLogEntry } from './conversation-log.js';
import { ConversationLog, type ConversationLogRead } from './conversation-log.js';
import type { Directives } from './directives.js';
import { inferPreferences } from './preferences.js';
import { type DreamPassName, type DreamProgressListener, notify } from './progress.js';

/** Per-pass settings: a model of its own (a cheap one for memory work), a directive, or the pass turned off. */
export interface DreamPassOptions {
  /** Default: the dream's `model`. */
  model?: ChatModel;
  /** Replaces the pass's built-in instructions (wins over `directives`). */
  directive?: string;
  /** Default true. */
  enabled?: boolean;
}

export interface DreamOptions {
  stores: Pick<KiokuStores, 'facts' | 'sessions'>;
  model: ChatModel;
  scope: Scope;
  /** Feedback signals. Default: the user's, kept by `FeedbackLog` over `stores.sessions`. */
  feedback?: readonly FeedbackSignal[];
  /**
   * The conversation since the last pass. Default: read by `ConversationLog` from the transcripts of the
   * user's sessions, since their watermarks.
   */
  log?: readonly ConversationLogEntry[];
  /** Produce and return the changesets; write no fact (and keep nothing unless `keep`). */
  dryRun?: boolean;
  /** With `dryRun`: keep each changeset as `proposed`, to apply it later by id (`ChangesetLog.applyKept`). */
  keep?: boolean;
  consolidation?: DreamPassOptions;
  preferences?: DreamPassOptions & { category?: string };
  /** Loaded directive files (`loadDirectives`): each replaces its pass's built-in prompt. */
  directives?: Directives;
  /**
   * Called once the preference pass is over, whether its model succeeded or not (and also when the
   * consolidation before it threw). Not called on a dry run. A log read from the transcripts is cleared
   * (its watermarks advanced) at the same moment.
   */
  clearLog?: () => Promise<void> | void;
  /** Where changesets are kept (default: one over `stores.sessions`). */
  changesets?: ChangesetLog;
  /** Where the log is read from when `log` is not given (default: one over `stores.sessions`). */
  conversationLog?: ConversationLog;
  /** Where feedback is read from when `feedback` is not given (default: one over `stores.sessions`). */
  feedbackLog?: FeedbackLog;
  /** Told at every stage of each pass (reading, model, applying, done). */
  onProgress?: DreamProgressListener;
  clock?: Clock;
  signal?: AbortSignal;
}

export interface DreamPassResult {
  pass: DreamPassName;
  /** The changeset the pass produced (absent when the pass failed). */
  changeset?: Changeset;
  /** What applying it did (absent on a dry run and when the pass failed). */
  result?: ApplyResult;
  /** Why the pass failed (e.g. MODEL_OUTPUT: the model's answer was still invalid after a repair); nothing was written. */
  error?: { code: string; message: string };
}

export interface DreamResult {
  passes: DreamPassResult[];
  /** Everything the dream's model calls spent, labelled by pass. */
  usage: UsageLedger;
  /** Log entries left out because the log held more than its bound (the newest were read). */
  logOmitted?: number;
  /** Set when the dream did not run because another one of the same user was running (another instance). */
  busy?: { holder: string | undefined; expiresAt: string | undefined };
}

/**
 * The dream: consolidation, then preference inference, each producing a changeset. Unless `dryRun`, each
 * changeset is applied (stale records are conflicts, reported in `result.conflicts`) and kept, so it can
 * be reverted by id; with `dryRun` and `keep` it is kept as `proposed`, to be applied later by id. A pass
 * whose model fails is reported in its `error` and changes nothing; the other pass still runs. Errors that
 * are not Kioku's are thrown.
 *
 * The feedback and the conversation log are read from the stores unless given. The log is cleared after
 * the preference pass whatever happened (its model failed, or consolidation threw first) — never on a
 * dry run, and not when the preference pass is turned off.
 */
export function dream(options: DreamOptions): Promise<DreamResult> {
  return inPass(
    'dream',
    () => ({ 'kioku.dry_run': options.dryRun === true }),
    async (span) => {
      const result = await dreamPasses(options);
      span?.setAttributes({
        'gen_ai.usage.input_tokens': result.usage.total.inputTokens,
        'gen_ai.usage.output_tokens': result.usage.total.outputTokens,
      });
      return result;
    },
  );
}

async function dreamPasses(options: DreamOptions): Promise<DreamResult> {
  const { stores, scope } = options;
  const clock = options.clock ?? systemClock;
  const usage = new UsageLedger();
  const kept = options.changesets ?? new ChangesetLog(stores.sessions);
  const progress = options.onProgress;
  const common = {
    facts: stores.facts,
    scope,
    clock,
    usage,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(progress ? { onProgress: progress } : {}),
  };
  const passes: DreamPassResult[] = [];
  const directives = options.directives ?? {};

  const run = async (pass: DreamPassName, produce: () => Promise<Changeset>): Promise<void> => {
    let changeset: Changeset;
    try {
      changeset = await produce();
    } catch (error) {
      if (!isKiokuError(error)) throw error;
      passes.push({ pass, error: { code: error.code, message: error.message } });
      notify(progress, { pass, stage: 'done', error: error.code });
      return;
    }
    const operations = changeset.operations.length;
    if (options.dryRun || operations === 0) {
      if (options.dryRun && options.keep && operations > 0) {
        notify(progress, { pass, stage: 'applying', operations });
        await kept.propose(scope, changeset);
      }
      passes.push({ pass, changeset });
      notify(progress, { pass, stage: 'done', operations, applied: 0, conflicts: 0 });
      return;
    }
    notify(progress, { pass, stage: 'applying', operations });
    const { changeset: applied, result } = await kept.apply(stores.facts, scope, changeset, isoAt(clock));
    passes.push({ pass, changeset: applied, result });
    notify(progress, {
      pass,
      stage: 'done',
      operations,
      applied: result.applied.length,
      conflicts: result.conflicts.length,
    });
  };

  // Each pass in its own span (`kioku.pass consolidation`, `kioku.pass preferences`) when telemetry is on.
  const traced = (pass: DreamPassName, produce: () => Promise<Changeset>) =>
    inPass(
      pass,
      () => ({}),
      async (span) => {
        await run(pass, produce);
        const done = passes.at(-1);
        if (span && done?.changeset) span.setAttributes(changesetAttributes(done.changeset, done.result));
      },
    );

  const c = options.consolidation ?? {};
  const p = options.preferences ?? {};
  const preferencesOn = p.enabled !== false;
  // The log is read before anything else, so what a failing dream clears is exactly what it read.
  const conversationLog = options.conversationLog ?? new ConversationLog(stores.sessions);
  let read: ConversationLogRead | undefined;
  if (preferencesOn && options.log === undefined) read = await conversationLog.read(scope);
  const log = options.log ?? read?.entries ?? [];
  try {
    if (c.enabled !== false) {
      const feedback =
        options.feedback ??
        (await (options.feedbackLog ?? new FeedbackLog(stores.sessions, { clock })).list(scope));
      const directive = c.directive ?? directives.consolidation;
      await traced('consolidation', () =>
        consolidate({
          ...common,
          model: c.model ?? options.model,
          feedback,
          ...(directive !== undefined ? { directive } : {}),
        }),
      );
    }
    if (preferencesOn) {
      const directive = p.directive ?? directives.preferences;
      await traced('preferences', async () => {
        const cs = await inferPreferences({
          ...common,
          model: p.model ?? options.model,
          log,
          ...(directive !== undefined ? { directive } : {}),
          ...(p.category !== undefined ? { category: p.category } : {}),
        });
        if (!read?.omitted) return cs;
        const note = `Only the newest ${log.length} of ${log.length + read.omitted} log messages were read.`;
        return { ...cs, notes: [...(cs.notes ?? []), note] };
      });
    }
  } finally {
    if (preferencesOn && !options.dryRun) {
      if (read) await conversationLog.clear(scope, read);
      await options.clearLog?.();
    }
  }
  return { passes, usage, ...(read && read.omitted > 0 ? { logOmitted: read.omitted } : {}) };
}
