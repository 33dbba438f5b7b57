import { sse } from '@kioku/openai-test-server';
import { describe, expect, it } from 'vitest';
import { startEndpoint } from './endpoint.js';
import { runCli, useDataDir } from './run.js';

const temp = useDataDir('kioku-demo-framework-');

const systemText = (body: Record<string, unknown>) =>
  (body.messages as { role: string; content: string | null }[])
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');

/** Streamed text, ending with a finish chunk as OpenAI's streams do (the AI SDK requires it). */
const streamed = (...parts: string[]) =>
  sse(
    parts.map((content) => ({ content })),
    { finishReason: 'stop' },
  );

describe('demo CLI with --framework ai-sdk', () => {
  it('runs the turns through the AI SDK: a tool call saves a fact, the next process recalls it', async () => {
    const server = await startEndpoint([
      sse(
        [
          {
            tool_calls: [
              {
                index: 0,
                id: 'call_1',
                type: 'function',
                function: { name: 'create_memory', arguments: '' },
              },
            ],
          },
          {
            tool_calls: [
              { index: 0, function: { arguments: '{"title":"Tea","content":"User\'s favourite' } },
            ],
          },
          { tool_calls: [{ index: 0, function: { arguments: ' tea is genmaicha"}' } }] },
        ],
        { finishReason: 'tool_calls' },
      ),
      streamed('Saved', ' — genmaicha', ' it is.'),
      streamed('You like ', 'genmaicha.'),
    ]);
    temp.closeAfter(server.close);
    const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'scripted', KIOKU_DATA_DIR: temp.dataDir };
    const flags = ['--user', 'alice', '--embeddings', 'off', '--framework', 'ai-sdk'];

    const first = await runCli(flags, {
      env,
      input: 'Remember that my favourite tea is genmaicha.\n/facts\n',
    });
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Turns run by the AI SDK');
    expect(first.stdout).toContain('kioku › Saved — genmaicha it is.');
    expect(first.stdout).toContain('⚙ create_memory(');
    expect(first.stdout).toMatch(/\(general\) Tea: User's favourite tea is genmaicha/);
    const [request] = server.chats();
    expect(request!.stream).toBe(true);
    // Kioku's system prompt came through the middleware; Kioku's and the sandbox's tools through the SDK.
    expect(systemText(request!)).toMatch(/^You are Kioku demo agent/);
    const tools = (request!.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(tools).toEqual(expect.arrayContaining(['create_memory', 'retrieve_memory', 'read_file']));

    const second = await runCli(flags, { env, input: 'What tea do I like?\n/ledger\n' });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('kioku › You like genmaicha.');
    expect(systemText(server.chats()[2]!)).toContain("User's favourite tea is genmaicha");
    expect(second.stdout).toMatch(/facts\s+\d+ tokens\s+1 included/);
    expect(server.chats()).toHaveLength(3);
  });

  it('refuses an unknown framework', async () => {
    const result = await runCli(['--framework', 'langchain'], { env: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      '--framework: unknown value "langchain" (use kioku, ai-sdk, langgraph, mastra)',
    );
  });
});
