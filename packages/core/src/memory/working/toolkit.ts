import { z } from 'zod';
import { type Clock, systemClock } from '../../foundation/clock.js';
import { NotFoundError } from '../../foundation/errors.js';
import { CategorySchema, TagSchema } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import { defineTool, type Toolkit } from '../../model/tool.js';
import { MAX_TTL_MS, WorkingPrefixSchema } from '../../store/working/record.js';
import type { WorkingMemoryStore } from '../../store/working/store.js';
import { formatRemaining, inventoryLine } from './format.js';
import { checkReadablePrefix, resolveKey, resolveWriteKey } from './namespace.js';
import { noteSeenEntry, saveSeenEntry } from './seen.js';

export interface WorkingMemoryToolkitOptions {
  store: WorkingMemoryStore;
  namespace: (scope: Readonly<Scope>) => string;
  clock?: Clock;
  /** Results of search_working_memory (default 10). */
  searchLimit: number;
  /** Characters of each value shown by search_working_memory (default 200). */
  previewChars: number;
}

const MAX_TTL_MINUTES = MAX_TTL_MS / 60_000;

const KeySchema = z.string().trim().min(1).max(512);
const NamespaceParam = WorkingPrefixSchema.describe('Another prefix, e.g. "patrol"');

/**
 * The working-memory tools. Every call runs in the turn's scope (user + agent) and its own
 * namespace; writes never leave it, reads may name any key of the same user + agent by its full path,
 * except under Kioku's reserved root (`kioku/…`, leases): naming one is VALIDATION. A save of a key the
 * model read in this conversation is checked against the version it read (CONFLICT when it changed since).
 */
export function workingMemoryToolkit(options: WorkingMemoryToolkitOptions): Toolkit {
  const { store } = options;
  const clock = options.clock ?? systemClock;
  const own = (scope: Readonly<Scope>) => options.namespace(scope);

  const save = defineTool({
    name: 'save_to_working_memory',
    description: 'Save scratch data under a key (replaces it).',
    parameters: z.object({
      key: KeySchema,
      data: z.string().min(1),
      ttl_minutes: z.number().positive().max(MAX_TTL_MINUTES).optional().describe('Default 5'),
      category: CategorySchema.optional(),
      tags: z.array(TagSchema).max(32).optional(),
    }),
    async execute(args, context) {
      const key = resolveWriteKey(args.key, own(context.scope));
      const entry = await saveSeenEntry(store, context, key, args.data, {
        ...(args.ttl_minutes === undefined
          ? {}
          : { ttlMs: Math.max(1, Math.round(args.ttl_minutes * 60_000)) }),
        ...(args.category === undefined ? {} : { category: args.category }),
        tags: args.tags ?? [],
      });
      return {
        saved: entry.key,
        expiresIn: formatRemaining(Date.parse(entry.expiresAt) - Date.parse(entry.storedAt)),
        expiresAt: entry.expiresAt,
      };
    },
  });

  const get = defineTool({
    name: 'get_from_working_memory',
    recall: true,
    description: 'Read a working-memory key or full path.',
    parameters: z.object({ key: KeySchema }),
    async execute(args, context) {
      const key = resolveKey(args.key, own(context.scope));
      const entry = await store.get(context.scope, key);
      if (!entry) {
        throw new NotFoundError(
          `No entry "${key}" in working memory (it may have expired). Use list_working_memory to see the keys.`,
        );
      }
      noteSeenEntry(context, entry);
      return entry.value;
    },
  });

  const list = defineTool({
    name: 'list_working_memory',
    description: 'List working-memory keys with time left.',
    parameters: z.object({ namespace: NamespaceParam.optional() }),
    async execute(args, { scope }) {
      const prefix = checkReadablePrefix(args.namespace ?? own(scope));
      const entries = await store.list(scope, prefix);
      if (entries.length === 0) return `No entries in working memory under "${prefix}".`;
      const now = clock.now();
      return [`Working memory under "${prefix}":`, ...entries.map((e) => inventoryLine(e, now))].join('\n');
    },
  });

  const search = defineTool({
    name: 'search_working_memory',
    recall: true,
    description: 'Search working memory; returns previews.',
    parameters: z.object({
      query: z.string().max(4000).optional(),
      category: CategorySchema.optional(),
      tags: z.array(TagSchema).max(32).optional(),
      namespace: NamespaceParam.optional(),
    }),
    async execute(args, context) {
      const { scope } = context;
      const prefix = checkReadablePrefix(args.namespace ?? own(scope));
      const hits = await store.search(scope, {
        prefix,
        limit: options.searchLimit,
        ...(args.query === undefined ? {} : { query: args.query }),
        ...(args.category === undefined ? {} : { category: args.category }),
        ...(args.tags === undefined ? {} : { tags: args.tags }),
      });
      if (hits.length === 0) return `No matching entries in working memory under "${prefix}".`;
      for (const { entry } of hits) noteSeenEntry(context, entry);
      const now = clock.now();
      return hits
        .map(({ entry }) => `${inventoryLine(entry, now)}\n  ${preview(entry.value, options.previewChars)}`)
        .join('\n');
    },
  });

  return { name: 'working-memory', tools: [save, get, list, search] };
}

function preview(value: string, chars: number): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length <= chars ? flat : `${flat.slice(0, chars)}…`;
}
