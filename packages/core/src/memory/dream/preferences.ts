import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { shortId } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import { CategorySchema } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import type { ChatModel } from '../../model/chat-model.js';
import { generateObject, type UsageLedger } from '../../model/structured.js';
import { PREFERENCE_CATEGORY } from '../../search/signals/preferences.js';
import type { FactStore } from '../../store/facts/store.js';
import { type Changeset, type FactOperation, newChangeset } from '../changesets/changeset.js';
import { trustedFacts } from '../trust/quarantine.js';
import type { ConversationLogEntry } from './conversation-log.js';
import { type DreamProgressListener, notify } from './progress.js';

/*
 * Dream pass 2 — preference inference. The model reads the conversation log for durable
 * preference patterns and rates each with a sentiment and an occurrence count; a preference is written
 * only past its sentiment's threshold. Produces a changeset; nothing is written here.
 */

export const SentimentSchema = z.enum(['very_irritated', 'mildly_frustrated', 'minor']);
export type Sentiment = z.infer<typeof SentimentSchema>;

/** Occurrences a preference needs before it is written: 1 when very irritated, 2 mildly frustrated, 3+ minor. */
export const PREFERENCE_THRESHOLDS: Readonly<Record<Sentiment, number>> = Object.freeze({
  very_irritated: 1,
  mildly_frustrated: 2,
  minor: 3,
});

export const INFERRED_PREFERENCE_CATEGORY = `${PREFERENCE_CATEGORY}/inferred`;

export const PreferenceOutputSchema = z.object({
  preferences: z
    .array(
      z.object({
        /** The preference as one durable statement, e.g. "User wants answers without emoji". */
        content: z.string().trim().min(1).max(LIMITS.factContentChars),
        /** very_irritated: repeated strong correction; mildly_frustrated: gentle pushback; minor: casual suggestion. */
        sentiment: SentimentSchema,
        /** How many times the log shows it (a claim: the code counts `messages`, see `countOccurrences`). */
        occurrences: z.number().int().min(1).max(100_000),
        /** The numbers of the log's messages that show it. */
        messages: z.array(z.number().int()).max(1000).optional(),
        /** True when it touches security, credentials or financial decisions. */
        sensitive: z.boolean().default(false),
        reason: z.string().max(2000).optional(),
      }),
    )
    .default([]),
});

export type PreferenceOutput = z.output<typeof PreferenceOutputSchema>;

/** The built-in instructions; `directive` replaces them (directive file `pref-dream.md`). */
export const DEFAULT_PREFERENCE_DIRECTIVE = `You infer durable preferences of one user from the conversation log below: the user's messages to an AI agent and the agent's replies, numbered, oldest first.
Infer preferences from what the user says; the agent's replies only show what the user was reacting to.
Report only durable patterns (how the user wants things done), never one-off requests or facts about a task.
For each preference give:
- content: one statement such as "User prefers concise answers without emoji";
- sentiment: very_irritated (repeated or strong correction), mildly_frustrated (gentle pushback) or minor (a casual suggestion);
- occurrences: how many of the user's messages show it;
- messages: the numbers of those messages in the log;
- sensitive: true when it touches security, credentials or money/financial decisions;
- reason: the messages it comes from.
Leave out what is already known (listed below). An empty list is a good answer.`;

/** Words that make a preference need the user's permission even when the model did not flag it. */
const SENSITIVE =
  /\b(secur\w*|password\w*|passphrase\w*|passcode\w*|pins?\b|pin[ -]?codes?|one[- ]time (?:codes?|passwords?|pins?)|verification codes?|security codes?|credential\w*|secrets?|api[ -]?keys?|tokens?|ssh|2fa|mfa|otp|auth\w*|login\w*|private[ -]keys?|encrypt\w*|money|financ\w*|bank\w*|payments?|pay|paying|purchas\w*|buy\w*|credit[ -]cards?|invest\w*|crypto\w*|wallets?|budget\w*|transfer\w*|invoice\w*|billing|refund\w*|\$\d|€\d|£\d)/i;

/** True when `text` mentions security, credentials or money (the keyword check behind the model's flag). */
export function touchesSensitiveTopic(text: string): boolean {
  return SENSITIVE.test(text);
}

/** True when a preference of this sentiment, seen `occurrences` times, is to be written. */
export function meetsPreferenceThreshold(sentiment: Sentiment, occurrences: number): boolean {
  return occurrences >= PREFERENCE_THRESHOLDS[sentiment];
}

export interface InferPreferencesOptions {
  facts: FactStore;
  model: ChatModel;
  scope: Scope;
  /** The conversation since the last pass: the user's messages (and the agent's replies, `role: 'assistant'`). */
  log: readonly ConversationLogEntry[];
  /** Replaces the built-in instructions (directive file `pref-dream.md`). */
  directive?: string;
  /** Where inferred preferences go (default `user-preferences/inferred`). */
  category?: string;
  clock?: Clock;
  usage?: UsageLedger;
  signal?: AbortSignal;
  /** Told when the pass starts reading and when it asks the model. */
  onProgress?: DreamProgressListener;
}

/**
 * Produce the preference changeset: a `create` for each candidate past its sentiment's threshold, in
 * `user-preferences/inferred` with tag `inferred`, `metadata.source = 'inferred'`, and
 * `metadata.requires_user_permission = 'true'` when the model flags security, credentials or money or the
 * keyword check finds them. Candidates under their threshold, or already stored, are named in the notes.
 * Throws `StructuredOutputError` when the model's answer is not valid after a repair attempt.
 */
export async function inferPreferences(options: InferPreferencesOptions): Promise<Changeset> {
  const clock = options.clock ?? systemClock;
  const { scope } = options;
  const category = CategorySchema.parse(options.category ?? INFERRED_PREFERENCE_CATEGORY);
  notify(options.onProgress, { pass: 'preferences', stage: 'reading' });
  if (options.log.length === 0) {
    return newChangeset('preferences', scope, [], { createdAt: isoAt(clock) });
  }
  const known = trustedFacts(
    await options.facts.list(scope, { category: PREFERENCE_CATEGORY, limit: 1000, order: 'newest' }),
  );
  notify(options.onProgress, { pass: 'preferences', stage: 'model', entries: options.log.length });
  const result = await generateObject(options.model, {
    schema: PreferenceOutputSchema,
    schemaName: 'preference_inference',
    label: 'dream:preferences',
    messages: [
      { role: 'system', content: options.directive ?? DEFAULT_PREFERENCE_DIRECTIVE },
      {
        role: 'user',
        content: preferencePrompt(
          options.log,
          known.map((f) => f.content),
        ),
      },
    ],
    ...(options.usage ? { usage: options.usage } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const now = isoAt(clock);
  const notes: string[] = [];
  const seen = new Set(known.map((f) => normalize(f.content)));
  const operations: FactOperation[] = [];
  for (const claimed of result.object.preferences) {
    const counted = countOccurrences(claimed, options.log);
    if (counted.note) notes.push(`${counted.note}: ${claimed.content}`);
    const p = { ...claimed, occurrences: counted.occurrences };
    if (!meetsPreferenceThreshold(p.sentiment, p.occurrences)) {
      notes.push(
        `Not written (${p.sentiment}, ${p.occurrences} of ${PREFERENCE_THRESHOLDS[p.sentiment]} occurrences needed): ${p.content}`,
      );
      continue;
    }
    const key = normalize(p.content);
    if (seen.has(key)) {
      notes.push(`Already known: ${p.content}`);
      continue;
    }
    seen.add(key);
    const needsPermission = p.sensitive || touchesSensitiveTopic(p.content);
    operations.push({
      op: 'create',
      after: {
        id: shortId(),
        content: p.content,
        category,
        tags: ['inferred'],
        metadata: {
          source: 'inferred',
          sentiment: p.sentiment,
          occurrences: p.occurrences,
          ...(needsPermission ? { requires_user_permission: 'true' } : {}),
        },
        provenance: { source: 'consolidation', note: 'inferred from the conversation log' },
        createdAt: now,
      },
      reason: p.reason || `${p.sentiment}, seen ${p.occurrences} time(s).`,
    });
  }
  return newChangeset('preferences', scope, operations, { createdAt: now, usage: result.usage, notes });
}

/**
 * The occurrences of a preference as the log shows them, not as the model claims: the distinct messages it
 * cites (numbered from 1, as `preferencePrompt` numbers them) that exist and are the user's; without
 * citations, the claim capped at the log's user messages. `note` says what was discarded or capped.
 */
export function countOccurrences(
  claimed: { occurrences: number; messages?: readonly number[] | undefined },
  log: readonly ConversationLogEntry[],
): { occurrences: number; note?: string } {
  const isUser = (n: number) => n >= 1 && n <= log.length && log[n - 1]!.role !== 'assistant';
  if (claimed.messages === undefined || claimed.messages.length === 0) {
    const users = log.filter((e) => e.role !== 'assistant').length;
    if (claimed.occurrences <= users) return { occurrences: claimed.occurrences };
    return {
      occurrences: users,
      note: `The model claimed ${claimed.occurrences} occurrences; the log shows at most ${users} user message(s)`,
    };
  }
  const cited = [...new Set(claimed.messages)];
  const kept = cited.filter(isUser);
  const discarded = cited
    .filter((n) => !isUser(n))
    .map((n) => `${n} (${n >= 1 && n <= log.length ? "the agent's" : 'not in the log'})`);
  const occurrences = kept.length;
  if (occurrences === claimed.occurrences && discarded.length === 0) return { occurrences };
  return {
    occurrences,
    note: `The model claimed ${claimed.occurrences} occurrences; counted ${occurrences} (messages ${kept.join(', ') || 'none'})${discarded.length > 0 ? `, discarded ${discarded.join(', ')}` : ''}`,
  };
}

/** The user message: the log numbered (with time and who spoke, when known), then the preferences already stored. */
export function preferencePrompt(log: readonly ConversationLogEntry[], known: readonly string[]): string {
  const lines = [`Conversation log (${log.length} messages):`];
  log.forEach((entry, i) => {
    const at = entry.at ? ` ${entry.at}` : '';
    const who = entry.role ? ` ${entry.role}:` : '';
    lines.push(`${i + 1}.${at}${who} ${entry.text.replace(/\s+/g, ' ').trim()}`);
  });
  lines.push('', `Preferences already known (${known.length}):`);
  for (const k of known) lines.push(`- ${k.replace(/\s+/g, ' ').trim()}`);
  if (known.length === 0) lines.push('(none)');
  return lines.join('\n');
}

function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
