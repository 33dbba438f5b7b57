import { KiokuBuilder, type KiokuStores, NotFoundError, type Scope } from '@kioku/core';
import {
  ChangesetLog,
  countOperations,
  type DreamProgress,
  ExtractionOutbox,
  extractSession,
  formatChangeset,
  type KeptChangeset,
  MEMORY_WORK_LEASE,
  type PassResult,
  SESSION_BATCH_DEFAULT,
  waitForLease,
} from '@kioku/core/passes';
import { idOption, type OptionTable, parseCommandOptions, plural, required, userId, write } from './args.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { loadChatModel } from './models.js';
import { openStores } from './stores.js';

/*
 * The memory life cycle from the command line: `kioku dream` (review, apply, revert the dream's
 * changesets) and `kioku extract` (facts from a stored session). Both open the stores from a backend spec,
 * run in the user's scope only, and show every change as a readable changeset before or after writing it.
 */

const string = { type: 'string' } as const;
const flag = { type: 'boolean' } as const;
const help = { type: 'boolean', short: 'h' } as const;

export const DREAM_OPTIONS = {
  store: string,
  user: string,
  agent: string,
  model: string,
  directives: string,
  'dry-run': flag,
  apply: string,
  revert: string,
  list: flag,
  json: flag,
  help,
} as const satisfies OptionTable;

export const EXTRACT_OPTIONS = {
  store: string,
  user: string,
  agent: string,
  session: string,
  model: string,
  batch: string,
  'dry-run': flag,
  json: flag,
  help,
} as const satisfies OptionTable;

function scopeOf(values: { user?: string; agent?: string }): Scope {
  const user = userId(required(values.user, '--user', 'alice'));
  return values.agent === undefined
    ? { userId: user }
    : { userId: user, agentId: idOption(values.agent, '--agent', 'agent') };
}

async function withStores<T>(spec: string, io: CliIo, fn: (stores: KiokuStores) => Promise<T>): Promise<T> {
  // Dream and extract work on memory that is there: a mistyped store is refused, never created.
  const stores = await openStores(spec, { role: 'source', ...(io.clock ? { clock: io.clock } : {}) });
  try {
    return await fn(stores);
  } finally {
    await stores.close().catch(() => {});
  }
}

/**
 * When the scope's partition has no fact, say where the user's facts are (other agents, or none), on
 * stderr: a user whose memory is under an agent otherwise reads as a user with nothing to dream about.
 */
async function sayWhereMemoryIs(stores: KiokuStores, scope: Scope, io: CliIo): Promise<void> {
  if ((await stores.facts.count(scope)) > 0) return;
  const here = scope.agentId === undefined ? 'without an agent' : `under agent "${scope.agentId}"`;
  const elsewhere = new Map<string | undefined, number>();
  for (const fact of (await stores.facts.snapshot({ userId: scope.userId })).records) {
    elsewhere.set(fact.agentId, (elsewhere.get(fact.agentId) ?? 0) + 1);
  }
  if (elsewhere.size === 0) {
    await write(io.stderr, `User "${scope.userId}" has no facts in this store (check --user and --store).\n`);
    return;
  }
  const where = [...elsewhere]
    .map(([agent, n]) =>
      agent === undefined
        ? `${plural(n, 'fact')} without an agent (leave out --agent)`
        : `${plural(n, 'fact')} ${n === 1 ? 'is' : 'are'} under agent "${agent}" (add --agent ${agent})`,
    )
    .join('; ');
  await write(io.stderr, `User "${scope.userId}" has no facts ${here}; ${where}.\n`);
}

function keptLine(kept: KeptChangeset): string {
  const counts = countOperations(kept.changeset);
  const documents = counts.create_document > 0 ? ` +${counts.create_document} documents` : '';
  return `  ${kept.changeset.id}  ${kept.changeset.pass.padEnd(13)} ${kept.changeset.status.padEnd(17)} ${kept.changeset.createdAt}  +${counts.create} ~${counts.update} -${counts.delete}${documents}`;
}

function progressLine(io: CliIo, event: DreamProgress): void {
  const detail =
    event.stage === 'model'
      ? ` (${Object.entries(event)
          .filter(([k, v]) => !['pass', 'stage'].includes(k) && typeof v === 'number')
          .map(([k, v]) => `${v} ${k}`)
          .join(', ')})`
      : '';
  io.stderr.write(`  ${event.pass}: ${event.stage}${detail}\n`);
}

/** `kioku dream`: run the dream (or only review it), list, apply or revert kept changesets. */
export async function dreamCommand(args: string[], io: CliIo, usage: () => Promise<number>): Promise<number> {
  const values = parseCommandOptions('dream', DREAM_OPTIONS, args);
  if (values.help) return usage();
  const store = required(values.store, '--store', 'sqlite:./kioku.db');
  const scope = scopeOf(values);
  const actions = [values.apply !== undefined, values.revert !== undefined, Boolean(values.list)];
  if (actions.filter(Boolean).length > 1 || (values['dry-run'] && actions.some(Boolean))) {
    throw new UsageError('Give one of --dry-run, --apply <id>, --revert <id> or --list.');
  }
  const who = `user "${scope.userId}"${scope.agentId ? ` (agent "${scope.agentId}")` : ''}`;
  // A dream needs a model: a missing endpoint is a usage error, reported before the store is opened.
  const model = actions.some(Boolean) ? undefined : await loadChatModel(values.model, 'kioku dream');
  return withStores(store, io, async (stores) => {
    if (values.list) {
      const kept = await new ChangesetLog(stores.sessions).list(scope);
      if (values.json) await write(io.stdout, `${JSON.stringify(kept)}\n`);
      else if (kept.length === 0) {
        await write(io.stdout, `No kept changesets for ${who}.\n`);
        await sayWhereMemoryIs(stores, scope, io);
      } else
        await write(io.stdout, `Changesets of ${who}, oldest first:\n${kept.map(keptLine).join('\n')}\n`);
      return 0;
    }
    const kioku = new KiokuBuilder({
      stores,
      ...(io.clock ? { clock: io.clock } : {}),
      ...(values.directives ? { directives: { directory: values.directives } } : {}),
    }).build();
    if (values.apply !== undefined || values.revert !== undefined) {
      const id = values.apply ?? values.revert!;
      const result =
        values.apply !== undefined
          ? await kioku.passes.applyKept(scope, id)
          : await kioku.passes.revert(scope, id);
      const done = 'applied' in result ? result.applied.length : result.reverted.length;
      if (values.json) await write(io.stdout, `${JSON.stringify(result)}\n`);
      else {
        const verb = values.apply !== undefined ? 'Applied' : 'Reverted';
        await write(
          io.stdout,
          `${verb} ${plural(done, 'operation')} of changeset ${id}` +
            (result.conflicts.length > 0
              ? `; ${plural(result.conflicts.length, 'conflict')} left as they are:\n${result.conflicts.map((c) => `  ! ${c.message}`).join('\n')}\n`
              : '.\n'),
        );
      }
      return result.conflicts.length > 0 ? 1 : 0;
    }
    if (!model) throw new UsageError('kioku dream: no model to dream with.');
    const dryRun = Boolean(values['dry-run']);
    io.stderr.write(`Dreaming over the memory of ${who}${dryRun ? ' (dry run: nothing is written)' : ''}…\n`);
    const result = await kioku.passes.dream({
      scope,
      model,
      ...(dryRun ? { dryRun: true, keep: true } : {}),
      onProgress: (event) => progressLine(io, event),
    });
    if (values.json) {
      await write(io.stdout, `${JSON.stringify({ ...result, usage: result.usage.total })}\n`);
      return result.busy ? 1 : 0;
    }
    if (result.busy) {
      await write(
        io.stderr,
        `Another dream of ${who} is running (${result.busy.holder ?? 'another instance'}, until ${result.busy.expiresAt ?? '?'}); nothing was done.\n`,
      );
      return 1;
    }
    if (result.passes.every((p) => !p.changeset || p.changeset.operations.length === 0)) {
      await sayWhereMemoryIs(stores, scope, io);
    }
    const out: string[] = [];
    for (const pass of result.passes) {
      if (pass.error)
        out.push(`${pass.pass}: failed, nothing written — ${pass.error.code}: ${pass.error.message}`);
      else if (pass.changeset) out.push(formatChangeset(pass.changeset));
    }
    const proposed = result.passes.filter((p) => p.changeset && p.changeset.operations.length > 0);
    if (dryRun && proposed.length > 0) {
      out.push(
        '',
        'Nothing was written. To apply a changeset after review:',
        ...proposed.map(
          (p) => `  kioku dream --store ${store} --user ${scope.userId} --apply ${p.changeset!.id}`,
        ),
      );
    } else if (!dryRun && proposed.length > 0) {
      out.push('', 'To undo a changeset: kioku dream --store … --user … --revert <id>');
    }
    await write(io.stdout, `${out.join('\n')}\n`);
    return result.passes.some((p) => p.error) ? 1 : 0;
  });
}

/**
 * The session's turns past its extraction watermark, through the outbox (as a worker drains them): passes
 * of `batch` turns, the watermark advanced with each, so turns the app's extraction or a worker already
 * read are not extracted again, nor these by them. NOT_FOUND when the session is not the user's.
 */
async function drainPastWatermark(
  stores: KiokuStores,
  model: Awaited<ReturnType<typeof loadChatModel>>,
  scope: Scope,
  sessionId: string,
  batch: number,
  signal: AbortSignal,
  clock: { clock?: NonNullable<CliIo['clock']> },
  io: CliIo,
): Promise<PassResult[]> {
  if (!(await stores.sessions.get(scope, sessionId))) {
    throw new NotFoundError(`Session "${sessionId}" is not one of user "${scope.userId}"'s sessions.`, {
      details: { sessionId },
    });
  }
  const outbox = new ExtractionOutbox({ stores, model, turnsPerPass: batch, ...clock });
  const pending = (await outbox.pending(scope, sessionId)).length;
  io.stderr.write(`  ${plural(pending, 'turn')} past the extraction watermark\n`);
  const drain = await outbox.drainSession(scope, sessionId, { signal });
  if (drain.error !== undefined) throw drain.error;
  return drain.results;
}

/**
 * `kioku extract`: the durable facts of a stored session as changesets. It reads the turns past the
 * session's extraction watermark and advances it; `--dry-run` and `--batch 1` read the whole session and
 * leave the watermark as it is.
 */
export async function extractCommand(
  args: string[],
  io: CliIo,
  usage: () => Promise<number>,
): Promise<number> {
  const values = parseCommandOptions('extract', EXTRACT_OPTIONS, args);
  if (values.help) return usage();
  const store = required(values.store, '--store', 'sqlite:./kioku.db');
  const scope = scopeOf(values);
  const sessionId = required(values.session, '--session', '<session id>');
  const model = await loadChatModel(values.model, 'kioku extract');
  const dryRun = Boolean(values['dry-run']);
  const batch = values.batch === undefined ? SESSION_BATCH_DEFAULT : Number(values.batch);
  if (!Number.isInteger(batch) || batch < 1 || batch > 100) {
    throw new UsageError(
      `--batch must be a whole number from 1 to 100 (turns per model call), not "${values.batch}".`,
    );
  }
  return withStores(store, io, async (stores) => {
    const changesets = new ChangesetLog(stores.sessions);
    const clock = io.clock ? { clock: io.clock } : {};
    // Held like any background job of this user, so an app instance's extraction never runs alongside.
    const results: PassResult[] = await waitForLease(
      stores.working,
      scope,
      MEMORY_WORK_LEASE,
      (signal) =>
        dryRun || batch === 1
          ? extractSession({
              stores,
              model,
              scope,
              sessionId,
              changesets,
              apply: !dryRun,
              batch,
              signal,
              ...clock,
              onProgress: (done, total) => io.stderr.write(`  turn ${done} of ${total}\n`),
            })
          : drainPastWatermark(stores, model, scope, sessionId, batch, signal, clock, io),
      clock,
    );
    if (dryRun) for (const r of results) await changesets.propose(scope, r.changeset);
    if (values.json) {
      await write(io.stdout, `${JSON.stringify(results)}\n`);
      return 0;
    }
    if (results.length === 0) {
      await write(io.stdout, `Nothing to remember in session ${sessionId}.\n`);
      return 0;
    }
    const out = results.map((r) => formatChangeset(r.changeset));
    if (dryRun) {
      out.push(
        '',
        'Nothing was written. To apply a changeset after review:',
        ...results.map(
          (r) => `  kioku dream --store ${store} --user ${scope.userId} --apply ${r.changeset.id}`,
        ),
      );
    }
    await write(io.stdout, `${out.join('\n')}\n`);
    return results.some((r) => (r.result?.conflicts.length ?? 0) > 0) ? 1 : 0;
  });
}
