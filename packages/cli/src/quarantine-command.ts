import { confirmQuarantined, dropQuarantined, explainMark, listQuarantined } from '@kioku/core/passes';
import { idOption, type OptionTable, parseCommandOptions, required, userId, write } from './args.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { openStores } from './stores.js';

/*
 * `kioku quarantine`: the user's review of memories held for confirmation — what the detector flagged in
 * a tool's output, a model's write or text the user pasted — listed with why, then confirmed (trusted from
 * now on) or dropped (deleted), one id at a time.
 */

export const QUARANTINE_OPTIONS = {
  store: { type: 'string' },
  user: { type: 'string' },
  agent: { type: 'string' },
  confirm: { type: 'string' },
  drop: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionTable;

/** `kioku quarantine`: 0 after listing, confirming or dropping; NOT_FOUND / VALIDATION for a wrong id. */
export async function quarantineCommand(
  args: string[],
  io: CliIo,
  usage: () => Promise<number>,
): Promise<number> {
  const values = parseCommandOptions('quarantine', QUARANTINE_OPTIONS, args);
  if (values.help) return usage();
  const spec = required(values.store, '--store', 'sqlite:./kioku.db');
  const scope = {
    userId: userId(required(values.user, '--user', 'alice')),
    ...(values.agent === undefined ? {} : { agentId: idOption(values.agent, '--agent', 'agent') }),
  };
  if (values.confirm !== undefined && values.drop !== undefined) {
    throw new UsageError('Give one of --confirm <id> or --drop <id>.');
  }
  const stores = await openStores(spec, { role: 'source', ...(io.clock ? { clock: io.clock } : {}) });
  try {
    if (values.confirm !== undefined) {
      const at = new Date(io.clock ? io.clock.now() : Date.now()).toISOString();
      const fact = await confirmQuarantined(stores.facts, scope, values.confirm, at);
      await write(io.stdout, `Confirmed ${fact.id}: it is recalled like any other memory from now on.\n`);
      return 0;
    }
    if (values.drop !== undefined) {
      const fact = await dropQuarantined(stores.facts, scope, values.drop);
      await write(io.stdout, `Dropped ${fact.id}: ${JSON.stringify(fact.content)} was deleted.\n`);
      return 0;
    }
    const held = await listQuarantined(stores.facts, scope);
    if (values.json) {
      await write(
        io.stdout,
        `${JSON.stringify(held.map((f) => ({ id: f.id, content: f.content, provenance: f.provenance })))}\n`,
      );
    } else if (held.length === 0) {
      await write(io.stdout, `Nothing held for confirmation for user "${scope.userId}".\n`);
    } else {
      const lines = held.map(
        (f) =>
          `  ${f.id}  ${JSON.stringify(f.content.slice(0, 120))}\n    ${explainMark(f.provenance.quarantine!)}`,
      );
      await write(
        io.stdout,
        `${held.length === 1 ? '1 memory' : `${held.length} memories`} of user "${scope.userId}" held for confirmation (kioku quarantine --confirm <id> | --drop <id>):\n${lines.join('\n')}\n`,
      );
    }
    return 0;
  } finally {
    await stores.close().catch(() => {});
  }
}
