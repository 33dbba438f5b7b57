import { sse, streamText } from '@kioku/openai-test-server';
import { describe, expect, it } from 'vitest';
import { startEndpoint } from './endpoint.js';
import { runCli, useDataDir } from './run.js';

const temp = useDataDir('kioku-demo-life-');

/** The user message of a memory pass's request. */
const promptOf = (body: Record<string, unknown>) =>
  (body.messages as { role: string; content: string }[]).findLast((m) => m.role === 'user')?.content ?? '';

describe('the memory life cycle in the chat (scripted endpoint)', () => {
  it('shows what extraction stored after a turn; /dream shows the changes and applies them only when asked; /revert undoes them', async () => {
    const server = await startEndpoint(
      [
        streamText('Lisbon is lovely.'),
        // A streamed tool call (the demo's chat model streams).
        sse([
          {
            tool_calls: [
              {
                index: 0,
                id: 'c1',
                type: 'function',
                function: {
                  name: 'create_memory',
                  arguments: JSON.stringify({ title: 'City', content: 'Home city: Lisbon, Portugal' }),
                },
              },
            ],
          },
        ]),
        streamText('Saved.'),
      ],
      {
        memory_extraction_batch: [
          { facts: [{ turn: 0, content: 'User lives in Lisbon', category: 'user-profile/location' }] },
        ],
        memory_consolidation: [
          (body: Record<string, unknown>) => ({
            merges: [
              {
                sourceIds: [...promptOf(body).matchAll(/^\d+\. \[([^\]]+)\][^\n]*Lisbon/gm)].map((m) => m[1]),
                content: 'User lives in Lisbon, Portugal',
                category: 'user-profile/location',
                tags: ['city'],
                reason: 'the same place twice',
              },
            ],
          }),
        ],
      },
    );
    temp.closeAfter(server.close);
    const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'scripted', KIOKU_DATA_DIR: temp.dataDir };
    const result = await runCli(['--user', 'alice', '--embeddings', 'off'], {
      env,
      input: [
        'I live in Lisbon.',
        'Please save my home city: Lisbon, Portugal.',
        '/dream',
        '/facts',
        '/dream apply',
        '/facts',
        '/changesets',
        '/feedback you called Lisbon a city in Spain',
        '/quit',
      ].join('\n'),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    // After the first turn: what extraction stored, with the changeset that undoes it.
    expect(out).toMatch(
      /✎ extraction \(changeset (\w+), \/revert \1 undoes it\):\n\s+\+ User lives in Lisbon/,
    );
    // /dream: the diff, and nothing applied until asked.
    const dream = out.split('you › /dream\n')[1]!.split('you › /facts')[0]!;
    expect(dream).toMatch(
      /\(consolidation\) for alice\/demo-agent, proposed: 1 to create, 0 to update, 2 to delete/,
    );
    expect(dream).toContain('reason: the same place twice');
    expect(dream).toContain('Nothing is applied yet. Type "/dream apply"');
    const [beforeApply, afterApply] = out.split('you › /dream apply');
    expect(beforeApply!.split('you › /facts')[1]).toContain('User lives in Lisbon\n');
    const applied = /Applied changeset (\w+): 3 changes\. \/revert \1 undoes it\./.exec(afterApply!);
    expect(applied).not.toBeNull();
    const factsAfter = afterApply!.split('you › /facts')[1]!.split('you › /changesets')[0]!;
    expect(factsAfter.match(/Lisbon/g)).toHaveLength(1);
    expect(out).toMatch(new RegExp(`${applied![1]}\\s+consolidation\\s+applied`));
    expect(out).toContain('noted as a correction');
    // The memory passes asked with a JSON schema, the chat without: both went to the one endpoint.
    expect(
      server.passes().map((b) => (b.response_format as { json_schema: { name: string } }).json_schema.name),
    ).toContain('memory_consolidation');

    // /revert in a new process: the two facts are back.
    const again = await runCli(['--user', 'alice', '--embeddings', 'off', '--resume'], {
      env,
      input: `/revert ${applied![1]}\n/facts\n/quit\n`,
    });
    expect(again.stdout).toContain(`Reverted changeset ${applied![1]}: 3 changes undone.`);
    expect(again.stdout.split('you › /facts')[1]!.match(/Lisbon/g)).toHaveLength(2);
  });
});
