import { withDeadline } from '../../foundation/deadline.js';
import { shortId } from '../../foundation/ids.js';
import type { Metadata } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import type { ToolResult } from '../../model/execute-tool.js';
import type { ToolOutputProcessor } from '../../runtime/feature.js';
import type { DetailStore } from '../../store/details/store.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { describeToolOutput } from './describe.js';
import { formatMemoryRef } from './ref.js';
import { extractiveSummary } from './summary.js';

/** What a `summarize` function is told about the output it summarizes. */
export interface SummarizeContext {
  scope: Readonly<Scope>;
  toolName: string;
  toolCallId: string;
  /** The call's arguments, as the model wrote them (JSON). */
  arguments: string;
  /** The output's size in tokens. */
  tokens: number;
  /** The most tokens the summary may take (longer summaries are cut). */
  maxTokens: number;
  /** The tokenizer the offload counts with. */
  tokenizer: Tokenizer;
  /** Aborts when the summary's time limit (`summaryTimeoutMs`) is up: the extractive summary is used then. */
  signal: AbortSignal;
}

/**
 * Summarizes an output for its placeholder. `label` names it in the detail's metadata (`summarizer`);
 * `modelSummarizer` sets `model`, other functions count as `custom`.
 */
export type Summarize = ((content: string, context: SummarizeContext) => Promise<string>) & {
  readonly label?: string;
};

export interface OffloadSettings {
  details: DetailStore;
  thresholdTokens: number;
  summaryTokens: number;
  tokenizer: Tokenizer;
  summarize: Summarize | undefined;
  /** The summarizer's time limit in ms. */
  summaryTimeoutMs: number;
  /** Tools whose output is never offloaded (the offload tools themselves). */
  exempt: ReadonlySet<string>;
}

/** Arguments are kept in the detail's metadata up to this many characters (metadata is capped at 64 KiB). */
const MAX_ARGUMENT_CHARS = 8_000;

function argumentsMetadata(args: string): Metadata {
  if (args.length > MAX_ARGUMENT_CHARS) {
    return { arguments: args.slice(0, MAX_ARGUMENT_CHARS), argumentsTruncated: true };
  }
  try {
    return { arguments: args.trim() === '' ? {} : JSON.parse(args) };
  } catch {
    return { arguments: args };
  }
}

/** The summary, who wrote it, and why the summarizer's was not used when it failed. */
interface Summary {
  text: string;
  by: string;
  fallback?: string;
}

async function summaryOf(
  content: string,
  context: Omit<SummarizeContext, 'signal'>,
  s: OffloadSettings,
): Promise<Summary> {
  let fallback: string | undefined;
  if (s.summarize) {
    const summarize = s.summarize;
    try {
      const summary = (
        await withDeadline(
          s.summaryTimeoutMs,
          undefined,
          (signal) => summarize(content, { ...context, signal }),
          'The summarizer',
        )
      ).trim();
      if (summary) {
        return {
          text: s.tokenizer.truncate(summary, s.summaryTokens).slice(0, 8_000),
          by: summarize.label ?? 'custom',
        };
      }
      fallback = 'EMPTY: the summarizer returned nothing';
    } catch (error) {
      // A failing or slow summary model must not fail the tool call: the extractive summary is used.
      const code = (error as { code?: unknown } | null)?.code;
      fallback =
        `${typeof code === 'string' ? code : 'FAILED'}: ${(error as Error)?.message ?? String(error)}`.slice(
          0,
          300,
        );
    }
  }
  return {
    text: extractiveSummary(content, s.summaryTokens, s.tokenizer).slice(0, 8_000),
    by: 'extractive',
    ...(fallback ? { fallback } : {}),
  };
}

/** The tool message that replaces an offloaded output. */
export function placeholderContent(id: string, description: string, tokens: number, summary: string): string {
  return [
    formatMemoryRef({ id, description, tokens }),
    `Summary: ${summary}`,
    `The full output is in detail memory: call retrieve_memory with id "${id}" to read it.`,
  ].join('\n');
}

/**
 * Layer 1 of two-layer memory: a successful tool output over the threshold goes to the detail store
 * (Layer 2) and the conversation keeps a `[MemoryRef: …]` placeholder with a short summary instead.
 */
export function offloadProcessor(s: OffloadSettings): ToolOutputProcessor {
  return {
    name: 'tool-output-offload',
    async process(result: ToolResult, { scope, arguments: args }): Promise<ToolResult> {
      if (result.isError || s.exempt.has(result.name)) return result;
      const tokens = s.tokenizer.count(result.content);
      if (tokens <= s.thresholdTokens) return result;
      const description = describeToolOutput(result.name, args);
      const context: Omit<SummarizeContext, 'signal'> = {
        scope,
        toolName: result.name,
        toolCallId: result.toolCallId,
        arguments: args,
        tokens,
        maxTokens: s.summaryTokens,
        tokenizer: s.tokenizer,
      };
      const { text: summary, by, fallback } = await summaryOf(result.content, context, s);
      const id = shortId();
      const content = placeholderContent(id, description, tokens, summary);
      // A tiny threshold with a long summary could make the placeholder the bigger of the two.
      if (s.tokenizer.count(content) >= tokens) return result;
      try {
        await s.details.create(scope, {
          id,
          type: 'tool_output',
          description,
          summary,
          content: result.content,
          metadata: {
            source: 'tool',
            tool: result.name,
            toolCallId: result.toolCallId,
            tokens,
            summarizer: by,
            ...(fallback ? { summaryFallback: fallback } : {}),
            ...argumentsMetadata(args),
          },
        });
      } catch (error) {
        // Not storable (over the detail size limit, backend down): keep the context bounded anyway.
        const reason = (error as Error)?.message ?? String(error);
        const head = s.tokenizer.truncate(result.content, s.thresholdTokens);
        return {
          ...result,
          content: `${head}\n[Output cut at ${s.thresholdTokens} of ${tokens} tokens; it could not be stored in detail memory: ${reason}]`,
        };
      }
      return { ...result, content };
    },
  };
}
