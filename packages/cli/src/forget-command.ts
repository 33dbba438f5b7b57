import { STORE_KINDS } from '@kioku/core';
import { type ErasureReceipt, forgetUser } from '@kioku/core/passes';
import { type OptionTable, parseCommandOptions, plural, required, userId, write } from './args.js';
import { parseBackend } from './backends.js';
import type { CliIo } from './io.js';
import { openStores } from './stores.js';

/*
 * `kioku forget`: erase one user's memory from a backend — every kind, every agent, Kioku's own sessions —
 * and print the erasure receipt, after a scan that finds nothing left (core's `forgetUser`).
 */

export const FORGET_OPTIONS = {
  store: { type: 'string' },
  user: { type: 'string' },
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
  const stores = await openStores(spec, { role: 'source', ...(io.clock ? { clock: io.clock } : {}) });
  try {
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
