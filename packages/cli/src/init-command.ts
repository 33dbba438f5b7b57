import { isKiokuError } from '@kioku/core';
import { type OptionTable, parseCommandOptions, required, write } from './args.js';
import { parseBackend } from './backends.js';
import type { CliIo } from './io.js';
import { openStores } from './stores.js';

/*
 * `kioku init --store <backend>`: the one command (with `--create` on studio and mcp) that starts a new,
 * empty store. Every other command refuses a store that does not exist, so a typo never serves or reads
 * an empty memory.
 */

export const INIT_OPTIONS = {
  store: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionTable;

/** 0 once the store exists with Kioku's schema (created, or already there and upgraded if it had to be). */
export async function initCommand(args: string[], io: CliIo, usage: () => Promise<number>): Promise<number> {
  const values = parseCommandOptions('init', INIT_OPTIONS, args);
  if (values.help) return usage();
  const spec = required(values.store, '--store', 'sqlite:./kioku.db');
  const { label, type } = parseBackend(spec);
  const clock = io.clock ? { clock: io.clock } : {};
  // Redis has no schema to look for (a server is a store), nor does every adapter: "ready" is all it says.
  const checks = type === 'json' || type === 'sqlite' || type === 'postgres';
  const existed = await openStores(spec, { role: 'source', setup: false, ...clock }).then(
    async (stores) => {
      await stores.close();
      return true;
    },
    (error: unknown) => {
      if (isKiokuError(error, 'NOT_FOUND')) return false;
      throw error;
    },
  );
  const stores = await openStores(spec, { role: 'target', ...clock });
  await stores.close();
  await write(
    io.stdout,
    !checks
      ? `${label} is ready (set up and reachable).\n`
      : existed
        ? `${label} already holds a Kioku store; its schema is up to date. Nothing else changed.\n`
        : `Created an empty Kioku store at ${label}.\n`,
  );
  return 0;
}
