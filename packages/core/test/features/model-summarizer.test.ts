import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ChatMessage,
  type ChatModel,
  defaultTokenizer,
  defineTool,
  KiokuBuilder,
  type MemoryFeature,
} from '../../src/index.js';
import type { ToolOutputOffloadOptions } from '../../src/memory/offload/feature.js';
import { modelSummarizer } from '../../src/memory/offload/summarizer.js';
import { extractiveSummary } from '../../src/memory/offload/summary.js';
import { InMemoryDetailStore } from '../../src/store/details/memory.js';
import { bundleWith } from '../bundle.js';
import { answer, callTools, scriptedModel } from './memory-features.harness.js';

const tok = defaultTokenizer;
const alice = { userId: 'alice' };

/** A deploy log: 150 lines of progress, then the one line that matters. */
const LOG = [
  ...Array.from({ length: 150 }, (_, i) => `[deploy] uploading chunk ${i} of 150 (${i * 64} KiB)`),
  '[deploy] FAILED: certificate for api.example.org expired on 2024-05-01',
].join('\n');

const shell: MemoryFeature = {
  name: 'shell',
  toolkit: {
    name: 'shell',
    tools: [
      defineTool({
        name: 'run_command',
        description: 'Run a shell command.',
        parameters: z.object({ cmd: z.string() }),
        execute: () => LOG,
      }),
    ],
  },
};

async function offloadWith(options: Omit<ToolOutputOffloadOptions, 'details'>) {
  const details = new InMemoryDetailStore();
  const kioku = new KiokuBuilder({ stores: bundleWith({ details }) })
    .use(shell)
    .withToolOutputOffload(options)
    .build();
  const convo = await kioku.startConversation(alice);
  const result = await convo.run(
    'deploy',
    scriptedModel([callTools(['run_command', { cmd: 'deploy' }]), answer('Deployed?')]),
  );
  const [detail] = await details.list(alice);
  return { details, detail: detail!, placeholder: result.messages.find((m) => m.role === 'tool')!.content };
}

/** A model that answers `text` (or throws, or never answers) and keeps what it was asked. */
function summaryModel(behaviour: string | Error | 'hang'): ChatModel & {
  asked: ChatMessage[][];
  aborted: () => boolean;
} {
  const asked: ChatMessage[][] = [];
  let aborted = false;
  return {
    asked,
    aborted: () => aborted,
    async complete({ messages, signal }) {
      asked.push(messages);
      if (behaviour instanceof Error) throw behaviour;
      if (behaviour === 'hang') {
        return new Promise((_, reject) =>
          signal?.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason);
          }),
        );
      }
      return { role: 'assistant', content: behaviour, usage: { inputTokens: 50, outputTokens: 12 } };
    },
  };
}

describe('model summaries for offloaded outputs', () => {
  it('puts the cheaper model’s summary in the placeholder and in detail search', async () => {
    const model = summaryModel('Deploy failed: the api.example.org certificate expired (2024-05-01).');
    const { details, detail, placeholder } = await offloadWith({ summaryModel: model });
    expect(placeholder.split('\n')[1]).toBe(
      'Summary: Deploy failed: the api.example.org certificate expired (2024-05-01).',
    );
    expect(detail.summary).toBe('Deploy failed: the api.example.org certificate expired (2024-05-01).');
    expect(detail.metadata).toMatchObject({ summarizer: 'model' });
    expect(detail.metadata.summaryFallback).toBeUndefined();
    // "expired" is in the log, "(2024-05-01)" too; "lapsed" only in a summary: detail search reads it.
    expect(await details.search(alice, { query: 'lapsed' })).toEqual([]);
    const summarized = await offloadWith({
      summaryModel: summaryModel('The TLS cert lapsed; deploy aborted.'),
    });
    expect((await summarized.details.search(alice, { query: 'lapsed' }))[0]?.detail.id).toBe(
      summarized.detail.id,
    );
    const asked = model.asked[0]!.map((m) => m.content).join('\n');
    expect(asked).toContain('Tool: run_command');
    expect(asked).toContain('FAILED: certificate for api.example.org expired');
  });

  it('sends a long output’s beginning and end, not its middle', async () => {
    const model = summaryModel('ok');
    await offloadWith({ summarize: modelSummarizer({ model, inputTokens: 300 }) });
    const asked = model.asked[0]![1]!.content;
    expect(asked).toContain('middle left out');
    expect(asked).toContain('uploading chunk 0 of 150');
    expect(asked).toContain('expired on 2024-05-01');
    expect(asked).not.toContain('uploading chunk 75 of 150');
  });

  it('falls back to the extractive summary when the model times out, and says so in the metadata', async () => {
    const model = summaryModel('hang');
    const { detail, placeholder } = await offloadWith({ summaryModel: model, summaryTimeoutMs: 20 });
    const extractive = extractiveSummary(LOG, 100, tok);
    expect(detail.summary).toBe(extractive);
    expect(placeholder).toContain(`Summary: ${extractive}`);
    expect(detail.metadata).toMatchObject({ summarizer: 'extractive' });
    expect(String(detail.metadata.summaryFallback)).toMatch(
      /^TIMEOUT: The summarizer did not finish within 20 ms/,
    );
    expect(model.aborted()).toBe(true);
  });

  it('falls back when the model fails or answers nothing; the tool call still succeeds', async () => {
    const failed = await offloadWith({ summaryModel: summaryModel(new Error('rate limited')) });
    expect(failed.detail.metadata).toMatchObject({
      summarizer: 'extractive',
      summaryFallback: 'FAILED: rate limited',
    });
    expect(failed.placeholder).toContain('[MemoryRef: ');
    const empty = await offloadWith({ summaryModel: summaryModel('   ') });
    expect(empty.detail.metadata).toMatchObject({
      summarizer: 'extractive',
      summaryFallback: 'EMPTY: the summarizer returned nothing',
    });
  });

  it('refuses both a summarize function and a summary model', () => {
    expect(() =>
      new KiokuBuilder({ stores: bundleWith({}) }).withToolOutputOffload({
        summarize: async () => 'x',
        summaryModel: summaryModel('y'),
      }),
    ).toThrow(/either `summarize` or `summaryModel`/);
  });
});
