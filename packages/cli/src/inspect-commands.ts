import { type Fact, type KiokuStores, STORE_KINDS, type StoreKind } from '@kioku/core';
import { isQuarantined } from '@kioku/core/passes';
import {
  idOption,
  type OptionTable,
  parseCommandArgs,
  parseCommandOptions,
  plural,
  required,
  userId,
  write,
} from './args.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { recordUserId } from './kinds.js';
import { openStores } from './stores.js';

/*
 * `kioku users`, `kioku stats` and `kioku search`: a look inside a store without Studio or export + jq.
 * They only read, and refuse a store that does not exist (like `forget`), so a typo never reads as empty.
 */

export const USERS_OPTIONS = {
  store: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionTable;
export const STATS_OPTIONS = USERS_OPTIONS;
export const SEARCH_OPTIONS = {
  store: { type: 'string' },
  user: { type: 'string' },
  agent: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionTable;

/** Records and their size (bytes of their JSON) per kind, for one user or the whole store. */
export type KindCounts = Record<StoreKind, { records: number; bytes: number }>;

export interface StoreStats {
  users: number;
  kinds: KindCounts;
  /** Quarantined facts: recall skips them until someone confirms them (Studio, `confirmQuarantined`). */
  quarantinedFacts: number;
  /** Sessions with turns that extraction has not read yet (the worker's queue). */
  pendingSessions: number;
  /** When the longest-waiting of those sessions got its first unread turn (ISO 8601). */
  oldestPending?: string;
}

function emptyCounts(): KindCounts {
  return Object.fromEntries(STORE_KINDS.map((kind) => [kind, { records: 0, bytes: 0 }])) as KindCounts;
}

/** Every record of every kind, counted per user (one read of each kind through its snapshot). */
async function countPerUser(
  stores: KiokuStores,
): Promise<{ perUser: Map<string, KindCounts>; facts: Fact[] }> {
  const perUser = new Map<string, KindCounts>();
  let facts: Fact[] = [];
  for (const kind of STORE_KINDS) {
    const { records } = await stores[kind].snapshot({ allUsers: true });
    if (kind === 'facts') facts = records as Fact[];
    for (const record of records) {
      const user = recordUserId(kind, record);
      const counts = perUser.get(user) ?? emptyCounts();
      perUser.set(user, counts);
      counts[kind].records += 1;
      counts[kind].bytes += Buffer.byteLength(JSON.stringify(record));
    }
  }
  return { perUser, facts };
}

async function withSourceStores<T>(spec: string, io: CliIo, fn: (stores: KiokuStores) => Promise<T>) {
  const stores = await openStores(spec, { role: 'source', ...(io.clock ? { clock: io.clock } : {}) });
  try {
    return await fn(stores);
  } finally {
    await stores.close();
  }
}

function kilobytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

/** `kioku users`: every user in the store with their records per kind. */
export async function usersCommand(args: string[], io: CliIo, usage: () => Promise<number>): Promise<number> {
  const values = parseCommandOptions('users', USERS_OPTIONS, args);
  if (values.help) return usage();
  const spec = required(values.store, '--store', 'sqlite:./kioku.db');
  const { perUser } = await withSourceStores(spec, io, (stores) => countPerUser(stores));
  const users = [...perUser.keys()].sort();
  if (values.json) {
    const rows = users.map((user) => ({
      userId: user,
      records: Object.fromEntries(STORE_KINDS.map((k) => [k, perUser.get(user)![k].records])),
    }));
    await write(io.stdout, `${JSON.stringify({ users: rows })}\n`);
    return 0;
  }
  const width = Math.max(4, ...users.map((u) => u.length));
  let out = `${'user'.padEnd(width)}  ${STORE_KINDS.map((k) => k.padStart(9)).join(' ')}\n`;
  for (const user of users) {
    const counts = perUser.get(user)!;
    out += `${user.padEnd(width)}  ${STORE_KINDS.map((k) => String(counts[k].records).padStart(9)).join(' ')}\n`;
  }
  await write(io.stdout, `${out}${plural(users.length, 'user')}\n`);
  return 0;
}

/** What `kioku stats` reports, from an open bundle. */
export async function storeStats(stores: KiokuStores): Promise<StoreStats> {
  const { perUser, facts } = await countPerUser(stores);
  const kinds = emptyCounts();
  for (const counts of perUser.values()) {
    for (const kind of STORE_KINDS) {
      kinds[kind].records += counts[kind].records;
      kinds[kind].bytes += counts[kind].bytes;
    }
  }
  const pending = await stores.sessions.listPending();
  const oldest = pending.map((p) => p.since).sort()[0];
  return {
    users: perUser.size,
    kinds,
    quarantinedFacts: facts.filter(isQuarantined).length,
    pendingSessions: pending.length,
    ...(oldest ? { oldestPending: oldest } : {}),
  };
}

/** `kioku stats`: users, records and their size per kind, quarantined facts, extraction waiting. */
export async function statsCommand(args: string[], io: CliIo, usage: () => Promise<number>): Promise<number> {
  const values = parseCommandOptions('stats', STATS_OPTIONS, args);
  if (values.help) return usage();
  const spec = required(values.store, '--store', 'sqlite:./kioku.db');
  const stats = await withSourceStores(spec, io, storeStats);
  if (values.json) {
    await write(io.stdout, `${JSON.stringify(stats)}\n`);
    return 0;
  }
  let out = `${plural(stats.users, 'user')}\n`;
  for (const kind of STORE_KINDS) {
    const { records, bytes } = stats.kinds[kind];
    out += `  ${kind.padEnd(10)} ${String(records).padStart(7)} record${records === 1 ? ' ' : 's'} ${kilobytes(bytes).padStart(10)}\n`;
  }
  out += `quarantined facts: ${stats.quarantinedFacts} (recall skips them until confirmed)\n`;
  out += `pending extraction: ${plural(stats.pendingSessions, 'session')}${stats.oldestPending ? `, oldest since ${stats.oldestPending}` : ''} (kioku worker reads them)\n`;
  await write(io.stdout, out);
  return 0;
}

/** A fact's trust as recall sees it: quarantined facts are searched but never injected. */
function trustOf(fact: Fact): string {
  const mark = fact.provenance.quarantine;
  if (mark) return `quarantined (score ${mark.score}: ${mark.hits.map((h) => h.rule).join(', ')})`;
  if (fact.provenance.confirmed) return `confirmed (${fact.provenance.source})`;
  return `trusted (${fact.provenance.source})`;
}

function limitOf(value: string | undefined): number {
  if (value === undefined) return 8;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new UsageError(`--limit "${value}" is not a whole number from 1 to 1000.`);
  }
  return n;
}

/**
 * `kioku search --user U "query"`: the facts the store's search returns for the query (what recall
 * reads before it drops quarantined facts), best first, with their scores and trust.
 */
export async function searchCommand(
  args: string[],
  io: CliIo,
  usage: () => Promise<number>,
): Promise<number> {
  const { values, positionals } = parseCommandArgs('search', SEARCH_OPTIONS, args);
  if (values.help) return usage();
  const spec = required(values.store, '--store', 'sqlite:./kioku.db');
  const user = userId(required(values.user, '--user', 'alice'));
  const agent = values.agent === undefined ? undefined : idOption(values.agent, '--agent', 'agent');
  const query = positionals.join(' ').trim();
  if (query === '')
    throw new UsageError('Give the query after the options, e.g. kioku search --user alice "units"');
  const limit = limitOf(values.limit);
  const scope = { userId: user, ...(agent ? { agentId: agent } : {}) };
  const hits = await withSourceStores(spec, io, (stores) => stores.facts.search(scope, { query, limit }));
  if (values.json) {
    const rows = hits.map(({ fact, score }) => ({
      id: fact.id,
      score,
      trust: isQuarantined(fact) ? 'quarantined' : 'trusted',
      source: fact.provenance.source,
      category: fact.category,
      content: fact.content,
    }));
    await write(io.stdout, `${JSON.stringify({ query, userId: user, hits: rows })}\n`);
    return 0;
  }
  let out = `${plural(hits.length, 'fact')} for "${query}" (user "${user}"${agent ? `, agent "${agent}"` : ''}):\n`;
  for (const [i, { fact, score }] of hits.entries()) {
    out += `${String(i + 1).padStart(3)}. ${score.toFixed(3).padStart(8)}  ${fact.id}  ${fact.category}  ${trustOf(fact)}\n`;
    out += `       ${fact.title ? `${fact.title}: ` : ''}${fact.content}\n`;
  }
  await write(io.stdout, out);
  return 0;
}
