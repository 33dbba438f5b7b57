import type { ChatModel } from '../../model/chat-model.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import type { Summarize } from './processor.js';

export const MODEL_SUMMARY_DEFAULTS = Object.freeze({
  /** Tokens of the output the model reads: its beginning and its end (errors are often last). */
  inputTokens: 4_000,
});

export const SUMMARY_INSTRUCTIONS = `Summarize a tool's output for an assistant that will only see your summary and a reference to the full output. In at most a few sentences: what the output is, its outcome (success, failure, counts), and the specific facts most likely to be needed later (errors, names, numbers, paths). Plain text, no preamble.`;

export interface ModelSummarizerOptions {
  /** A cheaper model is enough. */
  model: ChatModel;
  /** Tokens of the output sent to the model (default 4000: its beginning and its end). */
  inputTokens?: number;
  /** Replaces the built-in instructions. */
  instructions?: string;
}

/**
 * A `Summarize` that asks a (cheaper) model for the summary kept beside a placeholder and searched with the
 * detail. The offload processor gives it its time limit (`summaryTimeoutMs`, via `context.signal`) and uses
 * the extractive summary when it fails, times out or answers nothing; the detail's metadata records which
 * summary was kept (`summarizer: 'model' | 'extractive'`) and why (`summaryFallback`).
 */
export function modelSummarizer(options: ModelSummarizerOptions): Summarize {
  const inputTokens = options.inputTokens ?? MODEL_SUMMARY_DEFAULTS.inputTokens;
  const summarize = async (content: string, context: Parameters<Summarize>[1]): Promise<string> => {
    const reply = await options.model.complete({
      messages: [
        { role: 'system', content: options.instructions ?? SUMMARY_INSTRUCTIONS },
        {
          role: 'user',
          content: [
            `Tool: ${context.toolName}`,
            `Arguments: ${context.arguments || '{}'}`,
            `Output (${context.tokens} tokens${context.tokens > inputTokens ? ', middle left out' : ''}):`,
            excerpt(content, context.tokens, inputTokens, context.tokenizer),
            '',
            `Summary in at most ${context.maxTokens} tokens:`,
          ].join('\n'),
        },
      ],
      tools: [],
      signal: context.signal,
    });
    return reply.content;
  };
  return Object.assign(summarize, { label: 'model' });
}

/** The whole output when it fits, else its first two thirds of the budget and its last third. */
function excerpt(content: string, tokens: number, budget: number, tokenizer: Tokenizer): string {
  if (tokens <= budget) return content;
  const head = tokenizer.truncate(content, Math.floor((budget * 2) / 3));
  const tailChars = Math.floor(((content.length / tokens) * budget) / 3);
  return `${head}\n[…]\n${content.slice(content.length - tailChars)}`;
}
