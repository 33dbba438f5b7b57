import { z } from 'zod';
import type { Clock } from '../../foundation/clock.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import { WorkingPrefixSchema } from '../../store/working/record.js';
import { isReservedKey, RESERVED_KEY_ROOT } from '../../store/working/reserved.js';
import type { WorkingMemoryStore } from '../../store/working/store.js';
import { WORKING_MEMORY_MIDDLEWARE, workingMemoryMiddleware } from './middleware.js';
import { checkNamespace, defaultNamespace } from './namespace.js';
import { workingMemoryToolkit } from './toolkit.js';

export interface WorkingMemoryFeatureOptions {
  /** The scratch space; its TTL default (5 min) and per-namespace cap (50) apply. */
  store: WorkingMemoryStore;
  /**
   * The caller's own namespace, two segments: where the tools write and whose inventory is injected.
   * Default `session/{threadId}` (a user session). For a patrol task pass
   * `() => patrolNamespace('heartbeat')`, for a subagent `() => subagentNamespace(taskId)`.
   */
  namespace?: (scope: Readonly<Scope>) => string;
  /**
   * Inject the patrol findings section. Default: true when the own namespace is a `session/…` one, so
   * patrol tasks and subagents skip it.
   */
  isUserSession?: boolean;
  /** Where patrol findings are listed from (default `patrol`). */
  patrolPrefix?: string;
  /** Most entries listed per inventory section (default 50, the namespace cap); older ones are left out. */
  maxListed?: number;
  /** Results of search_working_memory (default 10). */
  searchLimit?: number;
  /** Characters of each value previewed by search_working_memory (default 200). */
  previewChars?: number;
  /**
   * Clock for the "expires in" figures. Default: the conversation's clock for the inventory and the
   * system clock for tool results — pass the store's clock when it has its own.
   */
  clock?: Clock;
  /** Offer the four tools (default true). */
  tools?: boolean;
}

const OptionsSchema = z.object({
  isUserSession: z.boolean().optional(),
  patrolPrefix: WorkingPrefixSchema.refine((p) => !isReservedKey(p), {
    message: `must not be under "${RESERVED_KEY_ROOT}/", which Kioku keeps for itself`,
  }).default('patrol'),
  maxListed: z.number().int().min(1).max(10_000).default(50),
  searchLimit: z.number().int().min(1).max(1000).default(10),
  previewChars: z.number().int().min(0).max(100_000).default(200),
  tools: z.boolean().default(true),
});

/**
 * Working memory (`withWorkingMemory()`): the inventory of the caller's own namespace — and, in user
 * sessions, the patrol findings — injected every turn without values, plus save_to_working_memory,
 * get_from_working_memory, list_working_memory and search_working_memory.
 */
export function workingMemory(options: WorkingMemoryFeatureOptions): MemoryFeature {
  const { isUserSession, patrolPrefix, maxListed, searchLimit, previewChars, tools } = parseOrThrow(
    OptionsSchema,
    options,
    'working memory options',
  );
  const custom = options.namespace;
  const namespace = custom ? (scope: Readonly<Scope>) => checkNamespace(custom(scope)) : defaultNamespace;
  const clock = options.clock;
  return {
    name: WORKING_MEMORY_MIDDLEWARE,
    middleware: workingMemoryMiddleware({
      store: options.store,
      namespace,
      isUserSession: (ns) => isUserSession ?? ns.startsWith('session/'),
      patrolPrefix,
      maxListed,
      ...(clock ? { clock } : {}),
    }),
    ...(tools
      ? {
          toolkit: workingMemoryToolkit({
            store: options.store,
            namespace,
            searchLimit,
            previewChars,
            ...(clock ? { clock } : {}),
          }),
        }
      : {}),
  };
}
