import { access } from 'node:fs/promises';
import path from 'node:path';
import { sse, streamText } from '@kioku/openai-test-server';
import { describe, expect, it } from 'vitest';
import { startEndpoint } from './endpoint.js';
import { runCli, useDataDir } from './run.js';

const temp = useDataDir('kioku-demo-');

const systemText = (body: Record<string, unknown>) =>
  (body.messages as { role: string; content: string | null }[])
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');

// These tests script every request in order, so the endpoint is not asked for embeddings (vectors.test.ts
// and knowledge.test.ts run with them).
const LEXICAL = ['--embeddings', 'off'];

describe('demo CLI against an OpenAI-compatible server', () => {
  it('remembers a fact in one process and recalls it in the next (same data dir)', async () => {
    const server = await startEndpoint([
      // Run 1: the model saves a fact (a streamed tool call), then answers in streamed pieces.
      sse([
        {
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'create_memory', arguments: '' } },
          ],
        },
        {
          tool_calls: [{ index: 0, function: { arguments: '{"title":"Tea","content":"User\'s favourite' } }],
        },
        { tool_calls: [{ index: 0, function: { arguments: ' tea is genmaicha"}' } }] },
      ]),
      streamText('Saved', ' — genmaicha', ' it is.'),
      // Run 2: a plain streamed answer; the test checks what Kioku injected into the request.
      streamText('You like ', 'genmaicha.'),
    ]);
    temp.closeAfter(server.close);
    const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'scripted', KIOKU_DATA_DIR: temp.dataDir };

    const first = await runCli(['--user', 'alice', ...LEXICAL], {
      env,
      input: 'Remember that my favourite tea is genmaicha.\n/facts\n/quit\n',
    });
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('kioku › Saved — genmaicha it is.');
    expect(first.stdout).toContain('⚙ create_memory(');
    expect(first.stdout).toMatch(/\(general\) Tea: User's favourite tea is genmaicha/);
    expect(server.chats()[0]!.stream).toBe(true);
    expect(systemText(server.chats()[0]!)).not.toContain('genmaicha');

    const second = await runCli(['--user', 'alice', ...LEXICAL], {
      env,
      input: 'What tea do I like?\n/ledger\n/facts\n',
    });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('kioku › You like genmaicha.');
    expect(systemText(server.chats()[2]!)).toContain("User's favourite tea is genmaicha");
    expect(second.stdout).toMatch(/facts\s+\d+ tokens\s+1 included/);
    expect(second.stdout).toContain('genmaicha');
    expect(server.chats()).toHaveLength(3);

    // Another user shares nothing with alice.
    const third = await runCli(['--user', 'bob', ...LEXICAL], { env, input: '/facts\n' });
    expect(third.stdout).toContain('No facts remembered yet.');
  });

  it('reports an endpoint error, keeps the session, and goes on', async () => {
    const server = await startEndpoint([
      (res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'bad model' } }));
      },
      streamText('Second try works.'),
    ]);
    temp.closeAfter(server.close);
    const result = await runCli(LEXICAL, {
      env: { OPENAI_BASE_URL: server.baseURL, KIOKU_DATA_DIR: temp.dataDir },
      input: 'hello\nhello again\n',
    });
    expect(result.stdout).toMatch(/error: STORAGE HTTP 400/);
    expect(result.stdout).toContain('kioku › Second try works.');
    // The failed turn's user message was recorded and is replayed in the next request.
    const replayed = (server.chats()[1]!.messages as { role: string; content: string }[]).filter(
      (m) => m.role === 'user',
    );
    expect(replayed.map((m) => m.content)).toEqual(['hello', 'hello again']);
  });

  it('exports, forgets (after asking) and imports the user, and the chat goes on', async () => {
    const server = await startEndpoint([
      sse([
        {
          tool_calls: [
            {
              index: 0,
              id: 'c1',
              type: 'function',
              function: { name: 'create_memory', arguments: '{"title":"City","content":"Lives in Lyon"}' },
            },
          ],
        },
      ]),
      streamText('Noted.'),
      streamText('You live in Lyon.'),
    ]);
    temp.closeAfter(server.close);
    const result = await runCli(['--user', 'carol', ...LEXICAL], {
      env: { OPENAI_BASE_URL: server.baseURL, KIOKU_DATA_DIR: temp.dataDir },
      input:
        'I live in Lyon.\n/learn handbook.md\n/export mine.json\n/forget\n/facts\n/forget yes\n/facts\n/docs\n' +
        '/import mine.json\n/facts\n/docs\nWhere do I live?\n',
    });
    // A relative export goes to the data folder (never the current folder), and says where it went. Two
    // sessions: the chat and Kioku's own extraction watermarks (the demo drains extraction after each turn).
    const file = path.join(temp.dataDir, 'mine.json');
    expect(result.stdout).toContain(
      `Exported facts 1, documents 1, plans 0, working 0, sessions 2, details 0 to ${file}`,
    );
    await expect(access(file)).resolves.toBeUndefined();
    // /forget alone only asks; nothing is deleted until "/forget yes".
    expect(result.stdout).toContain('Type "/forget yes" to go ahead.');
    expect(result.stdout.split('/forget yes')[0]).toContain('Lives in Lyon');
    // The receipt: every kind (Kioku's own sessions too), a digest, and a scan that found nothing left.
    expect(result.stdout).toMatch(/Forgot \d+ records of user "carol":/);
    expect(result.stdout).toMatch(/ {2}facts +1 /);
    expect(result.stdout).toMatch(/ {2}documents +1 /);
    expect(result.stdout).toMatch(/digest sha256:[0-9a-f]{64}/);
    expect(result.stdout).toMatch(/verified erased \(1 pass\)/);
    expect(result.stdout).toContain('No facts remembered yet.');
    expect(result.stdout).toContain('No documents learnt yet');
    expect(result.stdout).toMatch(/Imported facts 1, documents 1/);
    expect(result.stdout.split('Imported')[1]).toContain('Lives in Lyon');
    expect(result.stdout.split('Imported')[1]).toMatch(/Team handbook — 5 chunks/);
    // The import replaced the live session's partition; the next turn still runs.
    expect(result.stdout).toContain('You live in Lyon.');
    expect(result.stdout).not.toContain('NOT_FOUND');
  });
});
