import { z } from 'zod';
import { IdSchema } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import {
  CategorySchema,
  DEFAULT_CATEGORY,
  IsoDateSchema,
  MetadataSchema,
  OptionalAgentIdSchema,
  TagsSchema,
  textSchema,
} from '../../foundation/record-fields.js';
import { RecordVersionSchema } from '../../foundation/version.js';

/**
 * Who wrote a fact: the user or the app (`user`), the model through a memory tool (`assistant`, with
 * `toolName`), another tool (`tool`), a model pass over a conversation (`extraction`, with `sessionId` and
 * `turn`), the expansion of a saved memory (`enrichment`, `sourceIds` = the saved original), the dream
 * (`consolidation`, `sourceIds` = the merged facts) or an import.
 */
export const ProvenanceSourceSchema = z.enum([
  'user',
  'assistant',
  'tool',
  'extraction',
  'enrichment',
  'consolidation',
  'import',
]);

export type ProvenanceSource = z.infer<typeof ProvenanceSourceSchema>;

/** One rule of the injection detector that fired (`trust/detector.ts`), with the text it matched. */
export const RuleHitSchema = z.object({
  rule: z.string().max(100),
  weight: z.number().int().min(0).max(100),
  evidence: z.string().max(200),
});

/**
 * Why a fact is quarantined: it came from a tool, a document or a model pass and reads like instructions
 * to a model. Recall, injection and the life-cycle passes skip it until the user confirms it.
 */
export const QuarantineMarkSchema = z.object({
  score: z.number().int().min(0).max(1000),
  hits: z.array(RuleHitSchema).max(50),
  /** Where the flagged text came from, for the person who reviews it: "from text you pasted". */
  reason: z.string().max(200).optional(),
});

export type QuarantineMark = z.infer<typeof QuarantineMarkSchema>;

/** Where a fact came from. Consolidation lists the facts it merged in `sourceIds`. */
export const ProvenanceSchema = z.object({
  source: ProvenanceSourceSchema,
  sessionId: z.string().max(LIMITS.idChars).optional(),
  /** The turn of `sessionId` it came from (0 = the session's first user message). */
  turn: z.number().int().min(0).max(1_000_000).optional(),
  toolName: z.string().max(LIMITS.idChars).optional(),
  sourceIds: z.array(IdSchema).max(1000).optional(),
  note: z.string().max(1000).optional(),
  /** Present while the fact is quarantined (see `trust/quarantine.ts`); absent for a trusted fact. */
  quarantine: QuarantineMarkSchema.optional(),
  /** The quarantine the user lifted, and when: kept so a confirmation can be reviewed and undone. */
  confirmed: QuarantineMarkSchema.extend({ confirmedAt: IsoDateSchema }).optional(),
});

export type Provenance = z.infer<typeof ProvenanceSchema>;

const FactContentSchema = textSchema(LIMITS.factContentChars, 'content');
const TitleSchema = z.string().trim().min(1).max(LIMITS.titleChars);

/** A durable fact about a user: a preference, a project detail, an anti-pattern. */
export const FactSchema = z.object({
  id: IdSchema,
  userId: IdSchema,
  agentId: OptionalAgentIdSchema,
  title: TitleSchema.optional(),
  content: FactContentSchema,
  category: CategorySchema,
  tags: TagsSchema,
  metadata: MetadataSchema,
  provenance: ProvenanceSchema,
  /**
   * When what the fact tells happened, when known (the date of the conversation it came from, a date the
   * model read in it), beside `createdAt`, when it was stored. Recall ranks by it when a query names a time.
   */
  eventTime: IsoDateSchema.optional(),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
  /** 1 when created, one more on every update (see `records/version.ts`). */
  version: RecordVersionSchema,
});

export type Fact = z.infer<typeof FactSchema>;

export const FactInputSchema = z.object({
  /** Supply an id to import; otherwise a short random id is generated. */
  id: IdSchema.optional(),
  title: TitleSchema.optional(),
  content: FactContentSchema,
  category: CategorySchema.default(DEFAULT_CATEGORY),
  tags: TagsSchema.default([]),
  metadata: MetadataSchema.default({}),
  provenance: ProvenanceSchema.default({ source: 'user' }),
  /** When what it tells happened, when known (see `Fact.eventTime`). Stored in UTC. */
  eventTime: IsoDateSchema.optional(),
  /**
   * When the fact was first learned, for imports, merges (which carry the earliest `createdAt` of their
   * sources) and reverts (which restore a deleted fact exactly). Default: now. Stored in UTC.
   */
  createdAt: IsoDateSchema.optional(),
});

export type FactInput = z.input<typeof FactInputSchema>;

export const FactPatchSchema = z
  .object({
    /** `null` removes the title. */
    title: TitleSchema.nullable().optional(),
    content: FactContentSchema.optional(),
    category: CategorySchema.optional(),
    tags: TagsSchema.optional(),
    metadata: MetadataSchema.optional(),
    provenance: ProvenanceSchema.optional(),
    /** `null` removes the event time. */
    eventTime: IsoDateSchema.nullable().optional(),
  })
  .strict();

export type FactPatch = z.input<typeof FactPatchSchema>;

export const FactQuerySchema = z.object({
  /** Free text; when empty or absent, the newest matching facts are returned (recall's first-turn fallback). */
  query: z.string().max(LIMITS.queryChars).optional(),
  /** Category or category prefix: `user-preferences` matches `user-preferences/timezone`. */
  category: CategorySchema.optional(),
  /** Every one of these tags must be present. */
  tags: z.array(z.string()).max(LIMITS.tagCount).optional(),
  limit: z.number().int().min(1).max(1000).default(8),
});

export type FactQuery = z.input<typeof FactQuerySchema>;

/** Which facts `list` and `count` look at. */
export const FactFilterSchema = z.object({
  /** Category or category prefix, as in `FactQuery`. */
  category: CategorySchema.optional(),
  /** Every one of these tags must be present. */
  tags: z.array(z.string()).max(LIMITS.tagCount).optional(),
});

export type FactFilter = z.input<typeof FactFilterSchema>;

export const FactListOptionsSchema = FactFilterSchema.extend({
  /**
   * `oldest` (default) or `newest` first, by creation time; `updated`: most recently updated first
   * (ties: newest created first, then id in code-unit order), the order the fact block (mode `all`) injects facts in.
   */
  order: z.enum(['oldest', 'newest', 'updated']).default('oldest'),
  limit: z.number().int().min(1).max(100_000).optional(),
  offset: z.number().int().min(0).default(0),
});

export type FactListOptions = z.input<typeof FactListOptionsSchema>;

/**
 * The `updated` list order as a comparator: most recently updated first, then newest created, then id
 * ascending — a total order, so every store returns the same sequence. Plain code-unit comparison: right
 * for ISO timestamps and ids, and far faster than localeCompare.
 */
export function newestUpdatedFirst(a: Fact, b: Fact): number {
  return (
    descending(a.updatedAt, b.updatedAt) || descending(a.createdAt, b.createdAt) || -descending(a.id, b.id)
  );
}

function descending(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

export interface FactHit {
  fact: Fact;
  /** Relevance (higher is better); comparable only within one result list. */
  score: number;
}

export interface CategoryCount {
  category: string;
  count: number;
}

/** The text a fact is found by: title, content, tags and category words (`/` and `-` as spaces). */
export function factSearchText(fact: Pick<Fact, 'title' | 'content' | 'tags' | 'category'>): string {
  const category = fact.category.replace(/[/_-]/g, ' ');
  return [fact.title ?? '', fact.content, fact.tags.join(' '), category].join('\n');
}
