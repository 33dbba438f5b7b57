import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { isKiokuError } from '../../foundation/errors.js';
import type { Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { ChatModel, ModelUsage } from '../../model/chat-model.js';
import { generateObject, sumUsage, type UsageLedger } from '../../model/structured.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import type { DetailRecord } from '../../store/details/record.js';
import type { DetailStore } from '../../store/details/store.js';
import type { DocumentStore } from '../../store/documents/store.js';
import { defaultTokenizer, type Tokenizer } from '../../tokens/tokenizer.js';
import { type Changeset, type DocumentOperation, newChangeset } from '../changesets/changeset.js';
import { ChangesetLog, type PassResult } from '../changesets/changeset-log.js';
import { changesetPass } from '../changesets/pass-telemetry.js';
import { detectInjection } from '../trust/detector.js';

/** The pass name knowledge changesets carry. */
export const KNOWLEDGE_PASS = 'knowledge';

export const KNOWLEDGE_DEFAULTS = Object.freeze({
  /** An output offloaded at least this many times (same tool and arguments) becomes a document. */
  minOccurrences: 3,
  /** The newest offloaded outputs read. */
  maxDetails: 500,
  /** Documents proposed per pass at most (the most recurring first). */
  maxDocuments: 10,
  /** A document's text is cut to this many tokens. */
  documentTokens: 2_000,
  /** Tokens of outputs the model reads per document (the newest outputs, cut evenly). */
  modelInputTokens: 6_000,
  /** Outputs the model reads per document. */
  modelOutputs: 3,
});

export const DEFAULT_KNOWLEDGE_DIRECTIVE = `You turn outputs that an agent's tool produced again and again into one knowledge-base article for later reference.
Keep what stays true across the runs: what the command or file is, its structure, settings and values that do not change, recurring errors and what they mean. Say briefly what varies between runs. Do not invent anything the outputs do not show. Plain text or Markdown, no preamble.`;

const SettingsSchema = z.object({
  minOccurrences: z.number().int().min(2).max(10_000).default(KNOWLEDGE_DEFAULTS.minOccurrences),
  maxDetails: z.number().int().min(1).max(100_000).default(KNOWLEDGE_DEFAULTS.maxDetails),
  maxDocuments: z.number().int().min(1).max(1_000).default(KNOWLEDGE_DEFAULTS.maxDocuments),
  documentTokens: z.number().int().min(50).max(1_000_000).default(KNOWLEDGE_DEFAULTS.documentTokens),
});

const ArticleSchema = z.object({
  title: z.string().trim().min(1).max(200),
  text: z.string().trim().min(1),
});

export interface KnowledgeOptions {
  details: DetailStore;
  documents: DocumentStore;
  /** The user (and agent) whose offloaded outputs are read and whose knowledge documents are proposed. */
  scope: Scope;
  /** Writes each document from the outputs; without it (or when it fails) the document is assembled from them. */
  model?: ChatModel;
  /** Replaces the model's built-in instructions. */
  directive?: string;
  minOccurrences?: number;
  maxDetails?: number;
  maxDocuments?: number;
  documentTokens?: number;
  tokenizer?: Tokenizer;
  clock?: Clock;
  usage?: UsageLedger;
  signal?: AbortSignal;
}

/**
 * Consolidation of layer 2 into knowledge: the user's offloaded outputs that recur — the same tool with
 * the same arguments (one placeholder description), at least `minOccurrences` times — each become one
 * knowledge document, proposed as a `create_document` operation of a changeset (pass
 * `knowledge`) that is reviewed, applied and reverted like the dream's. The offloaded outputs stay as they
 * are. A document's id is derived from the recurring output, so a second pass proposes nothing for an
 * output already consolidated (the changeset notes it). With a `model` each document is an article the
 * model writes from the newest outputs; without one, or when it fails (noted), it is assembled: the
 * occurrences and their summaries, then the newest output, cut to `documentTokens`.
 */
export async function knowledgeChangeset(options: KnowledgeOptions): Promise<Changeset> {
  const clock = options.clock ?? systemClock;
  const tokenizer = options.tokenizer ?? defaultTokenizer;
  const d = {
    ...KNOWLEDGE_DEFAULTS,
    ...parseOrThrow(
      SettingsSchema,
      {
        minOccurrences: options.minOccurrences,
        maxDetails: options.maxDetails,
        maxDocuments: options.maxDocuments,
        documentTokens: options.documentTokens,
      },
      'knowledge consolidation options',
    ),
  };
  const { scope } = options;
  const details = await options.details.list(scope, {
    limit: d.maxDetails,
    ...(scope.agentId !== undefined ? { agentId: scope.agentId } : {}),
  });
  const groups = new Map<string, DetailRecord[]>();
  for (const detail of details) {
    // An output that reads like instructions never becomes knowledge.
    if (detectInjection(detail.content).flagged) continue;
    const key = `${detail.type}\u0000${detail.description}`;
    groups.set(key, [...(groups.get(key) ?? []), detail]);
  }
  const recurring = [...groups.entries()]
    .filter(([, group]) => group.length >= d.minOccurrences)
    .sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1));
  const notes: string[] = [];
  if (recurring.length > d.maxDocuments) {
    notes.push(`${recurring.length - d.maxDocuments} more recurring outputs are left for a later pass.`);
  }
  const operations: DocumentOperation[] = [];
  const spent: ModelUsage[] = [];
  for (const [key, group] of recurring.slice(0, d.maxDocuments)) {
    // Newest first (the store lists them so); the document describes them oldest to newest.
    const newest = group[0]!;
    const id = `knowledge-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
    if (await options.documents.get(scope, id)) {
      notes.push(`"${newest.description}" is already consolidated (document ${id}).`);
      continue;
    }
    let title = newest.description;
    let text = assembled(group, d.documentTokens, tokenizer);
    if (options.model) {
      try {
        const result = await generateObject(options.model, {
          schema: ArticleSchema,
          schemaName: 'knowledge_article',
          label: 'knowledge',
          messages: [
            { role: 'system', content: options.directive ?? DEFAULT_KNOWLEDGE_DIRECTIVE },
            { role: 'user', content: articlePrompt(group, d.modelOutputs, d.modelInputTokens, tokenizer) },
          ],
          tokenizer,
          ...(options.usage ? { usage: options.usage } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        spent.push(result.usage);
        title = result.object.title;
        text = tokenizer.truncate(result.object.text, d.documentTokens);
      } catch (error) {
        if (!isKiokuError(error)) throw error;
        notes.push(
          `The model could not write "${newest.description}" (${error.code}); it was assembled instead.`,
        );
      }
    }
    const oldest = group.at(-1)!;
    operations.push({
      op: 'create_document',
      after: {
        id,
        title,
        description: `Consolidated from ${group.length} offloaded outputs of ${newest.description}`.slice(
          0,
          200,
        ),
        tags: ['consolidated', newest.type],
        source: { type: 'text' },
        text,
        metadata: {
          consolidatedFrom: group.slice(0, 50).map((g) => g.id),
          occurrences: group.length,
          firstSeen: oldest.createdAt,
          lastSeen: newest.createdAt,
        },
      },
      reason: `"${newest.description}" was offloaded ${group.length} times (${oldest.createdAt.slice(0, 10)} to ${newest.createdAt.slice(0, 10)}).`,
    });
  }
  return newChangeset(KNOWLEDGE_PASS, scope, operations, {
    createdAt: isoAt(clock),
    ...(spent.length > 0 ? { usage: sumUsage(spent) } : {}),
    notes,
  });
}

export interface ConsolidateKnowledgeOptions extends Omit<KnowledgeOptions, 'details' | 'documents'> {
  stores: Pick<KiokuStores, 'facts' | 'details' | 'documents' | 'sessions'>;
  /** Produce and return the changeset; write no document (and keep nothing unless `keep`). */
  dryRun?: boolean;
  /** With `dryRun`: keep the changeset as `proposed`, to apply it later by id. */
  keep?: boolean;
  /** Where the changeset is kept (default: one over `stores.sessions`). */
  changesets?: ChangesetLog;
}

/**
 * The knowledge pass over a stores bundle: `knowledgeChangeset`, then (unless `dryRun`) applied and kept
 * in the changeset log, so it can be reverted by id — reverting deletes the documents it created. With
 * `dryRun` and `keep` it is kept as `proposed`.
 */
export function consolidateKnowledge(options: ConsolidateKnowledgeOptions): Promise<PassResult> {
  return changesetPass(
    'knowledge',
    () => ({}),
    () => consolidate(options),
  );
}

async function consolidate(options: ConsolidateKnowledgeOptions): Promise<PassResult> {
  const { stores, dryRun, keep, changesets, ...rest } = options;
  const changeset = await knowledgeChangeset({
    ...rest,
    details: stores.details,
    documents: stores.documents,
  });
  const log = changesets ?? new ChangesetLog(stores.sessions);
  if (changeset.operations.length === 0) return { changeset };
  if (dryRun) {
    if (keep) await log.propose(options.scope, changeset);
    return { changeset };
  }
  return log.apply(stores, options.scope, changeset, isoAt(options.clock ?? systemClock));
}

/** The occurrences (date, summary) oldest first, then the newest output, within `maxTokens`. */
function assembled(group: readonly DetailRecord[], maxTokens: number, tokenizer: Tokenizer): string {
  const newest = group[0]!;
  const lines = [
    `${newest.description}: offloaded ${group.length} times.`,
    '',
    'Occurrences (oldest first):',
    ...[...group]
      .reverse()
      .map((g) => `- ${g.createdAt} (${g.id})${g.summary ? `: ${flat(g.summary)}` : ''}`),
    '',
    `Newest output (${newest.createdAt}, ${newest.tokenCount} tokens):`,
    newest.content,
  ];
  return tokenizer.truncate(lines.join('\n'), maxTokens);
}

function articlePrompt(
  group: readonly DetailRecord[],
  outputs: number,
  maxTokens: number,
  tokenizer: Tokenizer,
): string {
  const shown = group.slice(0, outputs);
  const each = Math.floor(maxTokens / shown.length);
  return [
    `${group[0]!.description} — produced ${group.length} times; the newest ${shown.length}:`,
    ...shown.map((g, i) => `\n### Output ${i + 1} (${g.createdAt})\n${tokenizer.truncate(g.content, each)}`),
  ].join('\n');
}

function flat(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= 200 ? one : `${one.slice(0, 199)}…`;
}
