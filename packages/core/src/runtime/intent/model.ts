import { z } from 'zod';
import { withDeadline } from '../../foundation/deadline.js';
import { isKiokuError } from '../../foundation/errors.js';
import type { ChatModel } from '../../model/chat-model.js';
import type { ChatMessage } from '../../model/messages.js';
import { generateObject, UsageLedger } from '../../model/structured.js';
import { defaultTokenizer, type Tokenizer } from '../../tokens/tokenizer.js';
import { deterministicIntent } from './deterministic.js';
import type { IntentClassification, IntentClassifier, IntentInput } from './recall.js';

export const MODEL_INTENT = 'model';

export const MODEL_INTENT_DEFAULTS = Object.freeze({
  /** The turn waits at most this long for the model; then the fallback decides. */
  timeoutMs: 3_000,
  /** Context messages shown to the model (the newest). */
  contextMessages: 6,
  /** Tokens of each context message shown (longer ones are cut). */
  contextMessageTokens: 300,
});

const VerdictSchema = z.object({
  intent: z.enum(['concrete', 'ambiguous']),
  reason: z.string().trim().min(1).max(500),
  /** What the message refers to without saying it (empty when concrete). */
  unresolved: z.array(z.string().max(200)).max(10).default([]),
});

export const INTENT_INSTRUCTIONS = `You decide whether an assistant must search the user's memory before answering a message.

- "concrete": the message is specific and, together with the conversation so far, holds everything needed to act on it or answer it (general knowledge counts as held). Example: "Connect to the AgentFusion database" right after its connection details were discussed; "Translate 'good night' into French".
- "ambiguous": the message refers to something neither it nor the conversation says — "the DB", "that file", "as before", "my usual order", a person or event not mentioned — or misses parameters the user's past would supply. Example: "Connect to the DB" when no database was discussed; "When did Priya move?".

Answer with the intent, a one-sentence reason, and the unresolved references (empty when concrete).`;

export interface ModelIntentOptions {
  /** A small, fast model is enough. */
  model: ChatModel;
  /** Wait at most this long for the model (default 3000 ms), then let `fallback` decide. */
  timeoutMs?: number;
  /** Decides when the model fails, times out or answers malformed JSON (default: the deterministic classifier). */
  fallback?: IntentClassifier;
  /** Newest context messages shown (default 6), each cut to `contextMessageTokens` (default 300). */
  contextMessages?: number;
  contextMessageTokens?: number;
  /** Replaces the built-in instructions. */
  instructions?: string;
  /** Counts usage the model does not report, and cuts context messages (default o200k_base). */
  tokenizer?: Tokenizer;
}

/**
 * An intent classifier that asks a model (through `generateObject`: structured output, one repair
 * attempt). When the model throws, answers malformed JSON twice, or does not answer within `timeoutMs`,
 * the `fallback` classifier decides and the classification reports it (`fallback: { from: 'model', code,
 * message }`), so a turn never fails or stalls because of its intent step.
 */
export function modelIntentClassifier(options: ModelIntentOptions): IntentClassifier {
  const timeoutMs = options.timeoutMs ?? MODEL_INTENT_DEFAULTS.timeoutMs;
  const fallback = options.fallback ?? deterministicIntent();
  const tokenizer = options.tokenizer ?? defaultTokenizer;
  const shown = options.contextMessages ?? MODEL_INTENT_DEFAULTS.contextMessages;
  const cut = options.contextMessageTokens ?? MODEL_INTENT_DEFAULTS.contextMessageTokens;
  return {
    name: MODEL_INTENT,
    async classify(input: IntentInput): Promise<IntentClassification> {
      const usage = new UsageLedger();
      try {
        const { object } = await withDeadline(
          timeoutMs,
          input.signal,
          (signal) =>
            generateObject(options.model, {
              schema: VerdictSchema,
              schemaName: 'intent',
              messages: prompt(input, options.instructions ?? INTENT_INSTRUCTIONS, shown, cut, tokenizer),
              signal,
              usage,
              tokenizer,
            }),
          'The intent model',
        );
        return {
          intent: object.intent,
          reason: `${object.intent === 'concrete' ? 'Concrete' : 'Ambiguous'}: ${object.reason}`,
          cues: object.unresolved,
          by: MODEL_INTENT,
          ...(usage.entries.length > 0 ? { usage: usage.total } : {}),
        };
      } catch (error) {
        // The user's own abort is not the model's failure: it ends the turn.
        if (input.signal?.aborted) throw error;
        const decided = await fallback.classify(input);
        return {
          ...decided,
          fallback: { from: MODEL_INTENT, code: codeOf(error), message: messageOf(error) },
          ...(usage.entries.length > 0 ? { usage: usage.total } : {}),
        };
      }
    },
  };
}

function prompt(
  input: IntentInput,
  instructions: string,
  shown: number,
  cut: number,
  tokenizer: Tokenizer,
): ChatMessage[] {
  const context = input.context
    .filter((m) => m.content.trim() !== '')
    .slice(-shown)
    .map((m) => `${m.role}: ${tokenizer.truncate(m.content, cut)}`);
  return [
    { role: 'system', content: instructions },
    {
      role: 'user',
      content: [
        'Conversation so far:',
        context.length > 0 ? context.join('\n') : '(nothing: this is the first message)',
        '',
        'New message:',
        input.userMessage,
      ].join('\n'),
    },
  ];
}

function codeOf(error: unknown): string {
  if (isKiokuError(error)) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'MODEL_FAILED';
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
