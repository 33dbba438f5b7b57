import { type KiokuStores, NotFoundError, STORE_KINDS } from '@kioku/core';
import { type ErasureReceipt, forgetFact, forgetUser, SuppressionList } from '@kioku/core/passes';
import { idOption, type OptionTable, parseCommandOptions, plural, required, userId, write } from './args.js';
import { parseBackend } from './backends.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { openStores } from './stores.js';

/*
 * `kioku forget`: erase one user's memory from a backend — every kind, every agent, Kioku's own sessions —
 * and print the erasure receipt, after a scan that finds nothing left (core's `forgetUser`).
 */

export const FORGET_OPTIONS = {
  store: { type: 'string' },
  user: { type: 'string' },
  agent: { type: 'string' },
  fact: { type: 'string' },
  suppressed: { type: 'boolean' },
  revoke: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionTable;

/** The receipt as a few readable lines. */
export function formatReceipt(receipt: ErasureReceipt): string {
  const width = Math.max(...receipt.removed.map((r) => r.kind.length));
  const rows = receipt.removed.map(
    (r) => `  ${r.kind.padEnd(width)}  ${String(r.count).padStart(6)}  ${r.backend}`,
  );
  const head = receipt.dryRun
    ? `Would forget ${plural(receipt.total, 'record')} of user "${receipt.userId}" (dry run: nothing was removed):`
    : `Forgot ${plural(receipt.total, 'record')} of user "${receipt.userId}":`;
  const tail = receipt.dryRun
    ? []
    : [
        `  verified erased (${receipt.passes === 1 ? '1 pass' : `${receipt.passes} passes`}), ${receipt.startedAt} – ${receipt.finishedAt}`,
      ];
  return [head, ...rows, `  digest ${receipt.digest}`, ...tail].join('\n');
}

/**
 * `kioku forget`: 0 once the user is erased and a scan found nothing left (or, with --dry-run, counted);
 * a backend that keeps getting writes for the user fails with STORAGE naming what is left.
 */
export async function forgetCommand(
  args: string[],
  io: CliIo,
  usage: () => Promise<number>,
): Promise<number> {
  const values = parseCommandOptions('forget', FORGET_OPTIONS, args);
  if (values.help) return usage();
  const spec = required(values.store, '--store', 'sqlite:./kioku.db');
  const user = userId(required(values.user, '--user', 'alice'));
  const backend = parseBackend(spec).type;
  const modes = [values.fact !== undefined, Boolean(values.suppressed), values.revoke !== undefined];
  if (modes.filter(Boolean).length > 1 || (values['dry-run'] && modes.some(Boolean))) {
    throw new UsageError('Give one of --fact <id>, --suppressed, --revoke <hash> or --dry-run.');
  }
  if (values.agent !== undefined && values.fact === undefined) {
    throw new UsageError('--agent goes with --fact <id> (a user is forgotten under every agent).');
  }
  const stores = await openStores(spec, { role: 'source', ...(io.clock ? { clock: io.clock } : {}) });
  try {
    if (modes.some(Boolean)) return await oneFactOrSuppressions(stores, user, values, io);
    const receipt = await forgetUser(stores, user, {
      dryRun: Boolean(values['dry-run']),
      backends: Object.fromEntries(STORE_KINDS.map((kind) => [kind, backend])),
      ...(io.clock ? { clock: io.clock } : {}),
    });
    if (values.json) await write(io.stdout, `${JSON.stringify(receipt)}\n`);
    else await write(io.stdout, `${formatReceipt(receipt)}\n`);
    return 0;
  } finally {
    await stores.close().catch(() => {});
  }
}

/**
 * `--fact <id>`: forget one fact (and what derives from it), its text taken out of the kept changesets and
 * put on the user's suppression list; `--suppressed`: that list (hashes and dates, never text);
 * `--revoke <hash>`: lift one entry.
 */
async function oneFactOrSuppressions(
  stores: KiokuStores,
  user: string,
  values: { agent?: string; fact?: string; suppressed?: boolean; revoke?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  const suppressions = new SuppressionList(stores.sessions);
  if (values.fact !== undefined) {
    const scope = {
      userId: user,
      ...(values.agent === undefined ? {} : { agentId: idOption(values.agent, '--agent', 'agent') }),
    };
    const result = await forgetFact(stores, scope, values.fact, io.clock ? { clock: io.clock } : {});
    if (result.facts.length === 0) {
      throw new NotFoundError(
        `No fact "${values.fact}" of user "${user}"${values.agent ? ` (agent "${values.agent}")` : ''}: nothing was forgotten.`,
        { details: { factId: values.fact } },
      );
    }
    if (values.json) await write(io.stdout, `${JSON.stringify(result)}\n`);
    else {
      await write(
        io.stdout,
        `Forgot ${plural(result.facts.length, 'fact')} of user "${user}" (${result.facts.join(', ')}); its text left the kept changesets and is on the suppression list (kioku forget --suppressed).\n`,
      );
    }
    return 0;
  }
  if (values.revoke !== undefined) {
    if (!(await suppressions.revoke(user, values.revoke))) {
      throw new NotFoundError(`No suppression "${values.revoke}" for user "${user}" (see --suppressed).`, {
        details: { hash: values.revoke },
      });
    }
    await write(io.stdout, `Revoked ${values.revoke}: extraction may learn that fact again.\n`);
    return 0;
  }
  const listed = await suppressions.list(user);
  if (values.json) await write(io.stdout, `${JSON.stringify(listed)}\n`);
  else if (listed.length === 0) await write(io.stdout, `Nothing suppressed for user "${user}".\n`);
  else {
    await write(
      io.stdout,
      `Forgotten facts of user "${user}" that extraction will not learn again (keyed hashes; no text is kept):\n${listed.map((s) => `  ${s.hash}  ${s.at}`).join('\n')}\n`,
    );
  }
  return 0;
}
