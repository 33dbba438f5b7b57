import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { streamText } from '@kioku/openai-test-server';
import { describe, expect, it } from 'vitest';
import { EMBEDDING_FLAGS, startEndpoint, systemBlock } from './endpoint.js';
import { runCli, useDataDir } from './run.js';

const temp = useDataDir('kioku-demo-knowledge-');

describe('knowledge documents in the chat (/learn, /docs, --knowledge), with embeddings on', () => {
  it('learns a sandbox file and injects its matching chunks; refuses sources outside the sandbox', async () => {
    const server = await startEndpoint([streamText('Ingrid Svensson approves Friday deploys.')]);
    temp.closeAfter(server.close);
    // Next to the sandbox (<data-dir>/sandbox), not in it.
    await writeFile(path.join(temp.dataDir, 'secret.md'), '# Secret\n\nThe vault password is hunter2.\n');
    const env = { OPENAI_BASE_URL: server.baseURL, KIOKU_DATA_DIR: temp.dataDir };

    const result = await runCli(EMBEDDING_FLAGS, {
      env,
      input: [
        '/learn ../secret.md',
        `/learn ${path.join(temp.dataDir, 'secret.md')}`,
        '/learn file:///etc/passwd',
        '/learn handbook.md',
        '/docs',
        'Who has to approve a production deploy on a Friday?',
        '/ledger',
      ].join('\n'),
    });
    expect(result.code).toBe(0);
    // The refusal names the sandbox, so the user knows where the file has to go.
    const sandbox = path.join(temp.dataDir, 'sandbox');
    expect(result.stdout).toContain(
      `error: Refused: "../secret.md" is outside the sandbox (${sandbox}); put the file there first.`,
    );
    expect(result.stdout).toMatch(/error: Refused: ".*secret\.md" is outside the sandbox \(/);
    expect(result.stdout).toContain('error: Refused: "file:///etc/passwd" — only http(s) URLs');
    expect(result.stdout).toMatch(/Learnt "Team handbook" from handbook\.md: 5 chunks, \d+ tokens\./);
    expect(result.stdout).toMatch(/\[\w+\] Team handbook — 5 chunks/);
    expect(result.stdout).not.toMatch(/\] Secret/);

    // The question's request carries the chunk with the answer, best first — and not the whole handbook.
    const [request] = server.chats();
    const knowledge = systemBlock(request!, '[STATIC_KNOWLEDGE]');
    expect(knowledge).toMatch(
      /^\[STATIC_KNOWLEDGE\]\n## Team handbook \(from file:handbook\.md\) \(part 1\)\n/,
    );
    expect(knowledge).toContain('A deploy on a Friday needs a written approval from\nthe head of platform');
    expect(JSON.stringify(request)).not.toContain('hunter2');
    expect(result.stdout).toMatch(/knowledge\s+\d+ tokens\s+3 included/);
    // Hybrid: the chunks were embedded when learnt, and the question when searched.
    expect(server.embedded().some((t) => t.includes('Ingrid Svensson'))).toBe(true);
    expect(server.embedded()).toContain('Who has to approve a production deploy on a Friday?');
    expect(result.stdout).toContain('kioku › Ingrid Svensson approves Friday deploys.');
  });

  it('--knowledge and /learn of an http URL; learning the same source again replaces it', async () => {
    const server = await startEndpoint([]);
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<html><head><title>Release calendar</title></head><body><nav>Home</nav>' +
          '<main><p>The release freeze starts on 14 December.</p></main></body></html>',
      );
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/calendar.html`;
    temp.closeAfter(async () => {
      page.closeAllConnections();
      await new Promise((resolve) => page.close(resolve));
      await server.close();
    });
    const env = { OPENAI_BASE_URL: server.baseURL, KIOKU_DATA_DIR: temp.dataDir };

    const first = await runCli([...EMBEDDING_FLAGS, '--knowledge', 'handbook.md'], {
      env,
      input: `/learn ${url}\n/docs\n`,
    });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Learnt "Team handbook" from handbook\.md/);
    expect(first.stdout).toContain(`Learnt "Release calendar" from ${url}: 1 chunk,`);
    expect(first.stdout).toMatch(
      /\] Release calendar — 1 chunk, \d+ tokens \(http:\/\/127\.0\.0\.1:\d+\/calendar\.html\)/,
    );
    expect(server.embedded().some((t) => t.includes('The release freeze starts on 14 December.'))).toBe(true);

    // A refused --knowledge source stops the start before anything is learnt, the good one included.
    const refused = await runCli(
      [...EMBEDDING_FLAGS, '--knowledge', 'handbook.md', '--knowledge', '../outside.md'],
      {
        env,
        input: '/docs\n',
      },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Refused: "../outside.md" is outside the sandbox');
    expect(refused.stdout).not.toContain('Learnt "Team handbook"');

    const second = await runCli([...EMBEDDING_FLAGS, '--knowledge', 'handbook.md'], {
      env,
      input: '/docs\n',
    });
    expect(second.stdout).toContain('(replaces the earlier copy)');
    const docs = second.stdout.split('you › /docs')[1]!;
    expect(docs.match(/Team handbook/g)).toHaveLength(1);
    expect(docs).toContain('Release calendar');

    const outside = await runCli([...EMBEDDING_FLAGS, '--knowledge', '../../etc/passwd'], { env });
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain('is outside the sandbox');
  });
});
