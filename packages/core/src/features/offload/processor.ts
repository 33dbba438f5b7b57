import type { DetailStore } from '../../details/store.js';
import { shortId } from '../../ids.js';
import type { Metadata } from '../../records/common.js';
import type { Scope } from '../../scope.js';
import type { Tokenizer } from '../../tokenizer.js';
import type { ToolResult } from '../../toolkit/execute.js';
import type { ToolOutputProcessor } from '../../turn/feature.js';
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
}

export type Summarize = (content: string, context: SummarizeContext) => Promise<string>;

export interface OffloadSettings {
  details: DetailStore;
  thresholdTokens: number;
  summaryTokens: number;
  tokenizer: Tokenizer;
  summarize: Summarize | undefined;
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

async function summaryOf(content: string, context: SummarizeContext, s: OffloadSettings): Promise<string> {
  if (s.summarize) {
    try {
      const summary = (await s.summarize(content, context)).trim();
      if (summary) return s.tokenizer.truncate(summary, s.summaryTokens).slice(0, 8_000);
    } catch {
      // A failing summary model must not fail the tool call: fall back to the extractive summary.
    }
  }
  return extractiveSummary(content, s.summaryTokens, s.tokenizer).slice(0, 8_000);
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
 * Layer 1 of the two-layer PRD: a successful tool output over the threshold goes to the detail store
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
      const context: SummarizeContext = {
        scope,
        toolName: result.name,
        toolCallId: result.toolCallId,
        arguments: args,
        tokens,
        maxTokens: s.summaryTokens,
      };
      const summary = await summaryOf(result.content, context, s);
      const id = shortId();
      const content = placeholderContent(id, description, tokens, summary);
      // A tiny threshold with a long summary could make the placeholder the bigger of the two.
      if (s.tokenizer.count(content) >= tokens) return result;
      try {
        await s.details.put(scope, {
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
