import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ChatMessage,
  type ChatModel,
  conversationHistory,
  defaultTokenizer,
  defineTool,
  KiokuBuilder,
  type MemoryFeature,
  toolOutputOffload,
} from '../../src/index.js';
import type { Summarize } from '../../src/memory/offload/processor.js';
import { parseMemoryRef } from '../../src/memory/offload/ref.js';
import { extractiveSummary } from '../../src/memory/offload/summary.js';
import { countMessagesTokens } from '../../src/model/messages.js';
import { InMemoryDetailStore } from '../../src/store/details/memory.js';
import type { DetailStore } from '../../src/store/details/store.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { ManualClock } from '../../src/testing.js';
import { bundleWith } from '../bundle.js';

const tok = defaultTokenizer;

function scriptedModel(replies: ChatMessage[]): ChatModel & { prompts: ChatMessage[][] } {
  const prompts: ChatMessage[][] = [];
  return {
    prompts,
    async complete({ messages }) {
      prompts.push([...messages]);
      const reply = replies.shift();
      if (!reply) throw new Error('model script exhausted');
      return reply;
    },
  };
}

/** An `npm install` log of `lines` lines: about 20 tokens a line. */
function npmLog(lines: number): string {
  return Array.from(
    { length: lines },
    (_, i) => `npm http fetch GET 200 https://registry.npmjs.org/package-${i} ${40 + i}ms (cache miss)`,
  ).join('\n');
}

const outputs: Record<string, string> = {};

/** `run_command` answers with whatever the test put in `outputs` for the command. */
const shell: MemoryFeature = {
  name: 'shell',
  toolkit: {
    name: 'shell',
    tools: [
      defineTool({
        name: 'run_command',
        description: 'Run a shell command.',
        parameters: z.object({ cmd: z.string() }),
        execute: (args) => {
          const out = outputs[args.cmd];
          if (out === undefined) throw new Error(`command not found: ${args.cmd}`);
          return out;
        },
      }),
    ],
  },
};

function call(id: string, name: string, args: unknown): ChatMessage {
  return {
    role: 'assistant',
    content: '',
    toolCalls: [{ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) }],
  };
}

function setup(options: { details?: DetailStore; summarize?: Summarize; maxTokens?: number } = {}) {
  const clock = new ManualClock(Date.UTC(2025, 5, 1, 12));
  const sessions = new InMemorySessionStore({ clock });
  const details = options.details ?? new InMemoryDetailStore({ clock });
  const kioku = new KiokuBuilder({
    stores: bundleWith({ sessions }),
    clock,
    budget: { maxTokens: options.maxTokens ?? 16_000 },
  })
    .use(conversationHistory({ sessions }))
    .use(shell)
    .use(toolOutputOffload({ details, ...(options.summarize ? { summarize: options.summarize } : {}) }))
    .build();
  return { clock, sessions, details, kioku };
}

function toolMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.filter((m) => m.role === 'tool');
}

describe('toolOutputOffload', () => {
  it('stores a large output in the detail store and leaves an exact MemoryRef with a summary', async () => {
    const log = npmLog(200);
    outputs['npm install'] = log;
    const tokens = tok.count(log);
    expect(tokens).toBeGreaterThan(500);
    const { details, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice', agentId: 'coder' });
    const model = scriptedModel([
      call('c1', 'run_command', { cmd: 'npm install' }),
      { role: 'assistant', content: 'Installed.' },
    ]);
    const result = await convo.run('install the deps', model);
    const [stored, ...others] = await details.list({ userId: 'alice' });
    expect(others).toEqual([]);
    expect(stored).toMatchObject({
      userId: 'alice',
      agentId: 'coder',
      threadId: convo.sessionId,
      type: 'tool_output',
      description: 'run_command output (cmd: npm install)',
      content: log,
      tokenCount: tokens,
      createdAt: '2025-06-01T12:00:00.000Z',
      metadata: {
        source: 'tool',
        tool: 'run_command',
        toolCallId: 'c1',
        tokens,
        arguments: { cmd: 'npm install' },
      },
    });
    const summary = extractiveSummary(log, 100, tok);
    expect(stored!.summary).toBe(summary);
    expect(
      summary.startsWith('200 lines. Begins:\nnpm http fetch GET 200 https://registry.npmjs.org/package-0 '),
    ).toBe(true);
    const [message] = toolMessages(result.messages);
    expect(message!.content).toBe(
      [
        `[MemoryRef: ${stored!.id} - run_command output (cmd: npm install) - ${tokens} tokens]`,
        `Summary: ${summary}`,
        `The full output is in detail memory: call retrieve_memory with id "${stored!.id}" to read it.`,
      ].join('\n'),
    );
    expect(tok.count(message!.content)).toBeLessThan(200);
    // The model saw the placeholder, not the log.
    expect(toolMessages(model.prompts[1]!)[0]!.content).toBe(message!.content);
  });

  it('passes small outputs (up to the threshold) and errors through untouched', async () => {
    const exactly500 = tok.truncate(npmLog(100), 500);
    expect(tok.count(exactly500)).toBe(500);
    outputs.small = exactly500;
    const { details, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const model = scriptedModel([
      call('c1', 'run_command', { cmd: 'small' }),
      call('c2', 'run_command', { cmd: `missing ${npmLog(40)}` }),
      { role: 'assistant', content: 'done' },
    ]);
    const result = await convo.run('go', model);
    const [small, failed] = toolMessages(result.messages);
    expect(small!.content).toBe(exactly500);
    expect(tok.count(failed!.content)).toBeGreaterThan(500);
    expect(JSON.parse(failed!.content).error.code).toBe('TOOL_FAILED');
    expect(await details.list({ userId: 'alice' })).toEqual([]);
  });

  it('lets the model read the full output back by id, and only its own user', async () => {
    outputs.cat = npmLog(150);
    const { details, kioku } = setup();
    const alice = await kioku.startConversation({ userId: 'alice' });
    await alice.run(
      'cat it',
      scriptedModel([call('c1', 'run_command', { cmd: 'cat' }), { role: 'assistant', content: 'ok' }]),
    );
    const [detail] = await details.list({ userId: 'alice' });
    const read = await alice.run(
      'show me the full log',
      scriptedModel([
        call('r1', 'retrieve_memory', { id: detail!.id }),
        call('r2', 'retrieve_memory', {
          id: `[MemoryRef: ${detail!.id} - run_command output (cmd: cat) - ${detail!.tokenCount} tokens]`,
        }),
        { role: 'assistant', content: 'here it is' },
      ]),
    );
    // Returned whole, fenced with its id and source, and not offloaded a second time.
    const fenced = `[MEMORY_DETAIL ${detail!.id} from tool:run_command]\n${outputs.cat}\n[END_MEMORY_DETAIL]`;
    expect(toolMessages(read.messages).map((m) => m.content)).toEqual([fenced, fenced]);
    expect(await details.list({ userId: 'alice' })).toHaveLength(1);

    const bob = await kioku.startConversation({ userId: 'bob' });
    const stolen = await bob.run(
      'read alice',
      scriptedModel([
        call('b1', 'retrieve_memory', { id: detail!.id }),
        call('b2', 'search_memory_details', { query: 'npm registry package' }),
        { role: 'assistant', content: 'nothing' },
      ]),
    );
    const [denied, searched] = toolMessages(stolen.messages);
    expect(JSON.parse(denied!.content).error.code).toBe('NOT_FOUND');
    expect(denied!.content).not.toContain('registry');
    expect(JSON.parse(searched!.content)).toEqual({ results: [] });
  });

  it('finds offloaded outputs with search_memory_details', async () => {
    outputs['ls -R'] = npmLog(120);
    outputs['cat schema.json'] = JSON.stringify(
      Array.from({ length: 60 }, (_, i) => ({ id: i, name: `table_${i}`, columns: ['a', 'b', 'c'] })),
      null,
      1,
    );
    const { details, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await convo.run(
      'look',
      scriptedModel([
        call('c1', 'run_command', { cmd: 'ls -R' }),
        call('c2', 'run_command', { cmd: 'cat schema.json' }),
        call('c3', 'search_memory_details', { query: 'schema.json tables', limit: 1 }),
        { role: 'assistant', content: 'ok' },
      ]),
    );
    const schema = (await details.list({ userId: 'alice' })).find((d) => d.metadata.toolCallId === 'c2')!;
    expect(schema.summary).toMatch(
      /^JSON array of 60 items, items are objects with keys id, name, columns; \d+ lines\. Begins:\n\[/,
    );
    const transcript = await convo.prepare('next');
    const searchResult = toolMessages(transcript.messages).at(-1)!;
    expect(JSON.parse(searchResult.content)).toEqual({
      results: [
        {
          ref: `[MemoryRef: ${schema.id} - run_command output (cmd: cat schema.json) - ${schema.tokenCount} tokens]`,
          id: schema.id,
          type: 'tool_output',
          source: 'tool:run_command',
          summary: schema.summary,
          createdAt: schema.createdAt,
        },
      ],
    });
  });

  it('turns bad arguments into tool errors and writes nothing', async () => {
    const { details, kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const result = await convo.run(
      'break it',
      scriptedModel([
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'x1', name: 'retrieve_memory', arguments: '{}' },
            { id: 'x2', name: 'retrieve_memory', arguments: '{"id": 42}' },
            { id: 'x3', name: 'retrieve_memory', arguments: 'not json' },
            { id: 'x4', name: 'retrieve_memory', arguments: '{"id":"../../etc/passwd"}' },
            { id: 'x5', name: 'search_memory_details', arguments: '{"query":"x","limit":500}' },
            { id: 'x6', name: 'retrieve_memory', arguments: '{"id":"abc123abc123"}' },
          ],
        },
        { role: 'assistant', content: 'sorry' },
      ]),
    );
    expect(toolMessages(result.messages).map((m) => JSON.parse(m.content).error.code)).toEqual([
      'VALIDATION',
      'VALIDATION',
      'INVALID_JSON',
      'VALIDATION',
      'VALIDATION',
      'NOT_FOUND',
    ]);
    expect(await details.list({ userId: 'alice' }, { includeInactive: true })).toEqual([]);
  });

  it('replays the placeholder, never the raw output, in later turns', async () => {
    const marker = 'UNIQUE-RAW-MARKER';
    outputs.build = `${npmLog(100)}\n${marker}`;
    const { kioku } = setup();
    const convo = await kioku.startConversation({ userId: 'alice' });
    await convo.run(
      'build',
      scriptedModel([call('c1', 'run_command', { cmd: 'build' }), { role: 'assistant', content: 'built' }]),
    );
    const model = scriptedModel([{ role: 'assistant', content: 'it built' }]);
    const next = await convo.run('did it build?', model);
    const prompt = model.prompts[0]!;
    const replayedTool = toolMessages(prompt);
    expect(replayedTool).toHaveLength(1);
    expect(parseMemoryRef(replayedTool[0]!.content)).toMatchObject({
      description: 'run_command output (cmd: build)',
      tokens: tok.count(outputs.build),
    });
    expect(prompt.some((m) => m.content.includes(marker))).toBe(false);
    expect(next.ledger.totalTokens).toBe(countMessagesTokens(tok, prompt) + next.ledger.tools.tokens);
    expect(next.ledger.totalTokens).toBeLessThanOrEqual(16_000);
  });

  it('uses a pluggable summary, and falls back to the extractive one when it fails', async () => {
    outputs.big = npmLog(80);
    const seen: unknown[] = [];
    let fail = false;
    const summarize: Summarize = async (content, ctx) => {
      seen.push({ length: content.length, ...ctx });
      if (fail) throw new Error('summary model down');
      return 'Eighty packages fetched from the npm registry, all 200 OK.';
    };
    const { details, kioku } = setup({ summarize });
    const convo = await kioku.startConversation({ userId: 'alice', agentId: 'coder' });
    const model = () =>
      scriptedModel([call('c1', 'run_command', { cmd: 'big' }), { role: 'assistant', content: 'ok' }]);
    const first = await convo.run('one', model());
    expect(toolMessages(first.messages)[0]!.content.split('\n')[1]).toBe(
      'Summary: Eighty packages fetched from the npm registry, all 200 OK.',
    );
    expect(seen[0]).toEqual({
      length: outputs.big.length,
      scope: { userId: 'alice', agentId: 'coder', threadId: convo.sessionId },
      toolName: 'run_command',
      toolCallId: 'c1',
      arguments: '{"cmd":"big"}',
      tokens: tok.count(outputs.big),
      maxTokens: 100,
      tokenizer: tok,
      signal: expect.any(AbortSignal),
    });
    expect((await details.list({ userId: 'alice' }))[0]!.metadata).toMatchObject({ summarizer: 'custom' });
    fail = true;
    await convo.run('two', model());
    const [newest] = await details.list({ userId: 'alice' });
    expect(newest!.summary).toBe(extractiveSummary(outputs.big, 100, tok));
    expect(newest!.metadata).toMatchObject({
      summarizer: 'extractive',
      summaryFallback: 'FAILED: summary model down',
    });
  });

  it('cuts the output rather than flooding the context when it cannot be stored', async () => {
    outputs.huge = npmLog(100);
    const broken = new InMemoryDetailStore();
    broken.create = async () => {
      throw new Error('disk full');
    };
    const { kioku } = setup({ details: broken });
    const convo = await kioku.startConversation({ userId: 'alice' });
    const result = await convo.run(
      'go',
      scriptedModel([call('c1', 'run_command', { cmd: 'huge' }), { role: 'assistant', content: 'ok' }]),
    );
    const content = toolMessages(result.messages)[0]!.content;
    expect(content.startsWith(tok.truncate(outputs.huge, 500))).toBe(true);
    expect(content).toContain(`[Output cut at 500 of ${tok.count(outputs.huge)} tokens;`);
    expect(content).toContain('disk full');
    expect(tok.count(content)).toBeLessThan(560);
  });

  it('keeps outputs whose placeholder would not be smaller', async () => {
    outputs.medium = npmLog(3);
    const details = new InMemoryDetailStore();
    const sessions = new InMemorySessionStore();
    const kioku = new KiokuBuilder({ stores: bundleWith({ sessions }) })
      .use(shell)
      .use(toolOutputOffload({ details, thresholdTokens: 10, summaryTokens: 200 }))
      .build();
    const convo = await kioku.startConversation({ userId: 'alice' });
    const result = await convo.run(
      'go',
      scriptedModel([call('c1', 'run_command', { cmd: 'medium' }), { role: 'assistant', content: 'ok' }]),
    );
    expect(toolMessages(result.messages)[0]!.content).toBe(outputs.medium);
    expect(await details.list({ userId: 'alice' })).toEqual([]);
  });

  it('rejects invalid options', () => {
    const details = new InMemoryDetailStore();
    expect(() => toolOutputOffload({ details, thresholdTokens: 0 })).toThrow(/thresholdTokens/);
    expect(() => toolOutputOffload({ details, summaryTokens: -1 })).toThrow(/summaryTokens/);
  });
});
