import path from 'node:path';
import { ChangesetLog } from '@kioku/core/passes';
import { type Reply, startScriptedServer, text } from '@kioku/openai-test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores } from '../src/index.js';
import { ALICE, type CliResult, kioku, kiokuInProcess, tempDir } from './helpers.js';

/**
 * A scripted OpenAI-compatible model that answers each memory pass by the schema it asks for
 * (`response_format.json_schema.name`), so the tests do not depend on the order of the passes' calls.
 */
async function passModel(answers: Record<string, unknown[]>) {
  const asked: string[] = [];
  const route: Reply = (res, body, req) => {
    const format = body.response_format as { json_schema?: { name?: string } } | undefined;
    const name = format?.json_schema?.name ?? '(none)';
    asked.push(name);
    const queue = answers[name];
    const answer = queue && queue.length > 1 ? queue.shift() : queue?.[0];
    text(JSON.stringify(answer ?? {}))(res, body, req);
  };
  const server = await startScriptedServer(route);
  return { server, asked, env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' } };
}

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function sqliteStore() {
  const { dir, cleanup } = await tempDir();
  cleanups.push(cleanup);
  return `sqlite:${path.join(dir, 'kioku.db')}`;
}

describe('kioku dream', () => {
  it('reviews (dry run), applies by id and reverts exactly, in the one user’s memory only', async () => {
    const store = await sqliteStore();
    const stores = await openStores(store);
    await stores.facts.create(ALICE, {
      id: 'tea1',
      content: 'Likes tea',
      category: 'user-preferences/drinks',
    });
    await stores.facts.create(ALICE, {
      id: 'tea2',
      content: 'Likes green tea',
      category: 'user-preferences',
    });
    await stores.facts.create({ userId: 'bob' }, { id: 'tea1', content: 'Bob likes coffee' });
    await stores.close();
    const model = await passModel({
      memory_consolidation: [
        {
          merges: [
            {
              sourceIds: ['tea1', 'tea2'],
              content: 'Likes green tea',
              category: 'user-preferences/drinks',
              tags: ['tea'],
              reason: 'the same preference twice',
            },
          ],
        },
      ],
      preference_inference: [{ preferences: [] }],
    });
    cleanups.push(() => model.server.close());

    const dry = ok(
      await kioku(['dream', '--store', store, '--user', 'alice', '--dry-run'], { env: model.env }),
    );
    expect(dry.stdout).toMatch(
      /Changeset \w+ \(consolidation\) for alice, proposed: 1 to create, 0 to update, 2 to delete/,
    );
    expect(dry.stdout).toContain('reason: the same preference twice');
    expect(dry.stdout).toContain('Nothing was written.');
    expect(dry.stderr).toMatch(/consolidation: (reading|model)/); // progress
    const id = /--apply (\w+)/.exec(dry.stdout)![1]!;

    const listed = ok(await kioku(['dream', '--store', store, '--user', 'alice', '--list']));
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+consolidation\\s+proposed`));

    const applied = ok(await kioku(['dream', '--store', store, '--user', 'alice', '--apply', id]));
    expect(applied.stdout).toContain(`Applied 3 operations of changeset ${id}.`);
    let check = await openStores(store);
    expect((await check.facts.list(ALICE)).map((f) => f.content)).toEqual(['Likes green tea']);
    expect((await check.facts.list({ userId: 'bob' })).map((f) => f.content)).toEqual(['Bob likes coffee']);
    await check.close();

    ok(await kioku(['dream', '--store', store, '--user', 'alice', '--revert', id]));
    check = await openStores(store);
    expect((await check.facts.list(ALICE)).map((f) => f.id).sort()).toEqual(['tea1', 'tea2']);
    await check.close();
    // A dry run asks the model; list, apply and revert do not.
    expect(model.asked.filter((n) => n === 'memory_consolidation')).toHaveLength(1);
  });

  it('says what to set when no model endpoint is configured, and refuses two actions at once', async () => {
    const store = await sqliteStore();
    const noModel = await kioku(['dream', '--store', store, '--user', 'alice'], {
      env: { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' },
    });
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toMatch(/kioku dream needs OPENAI_API_KEY .*OPENAI_BASE_URL/);
    const both = await kioku(['dream', '--store', store, '--user', 'alice', '--apply', 'x', '--list']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Give one of --dry-run, --apply <id>, --revert <id> or --list.');
    const badUser = await kioku(['dream', '--store', store, '--user', '../bob', '--list']);
    expect(badUser.code).toBe(2);
    expect(badUser.stderr).toMatch(/--user "\.\.\/bob" is not a valid user id/);
  });
});

describe('kioku extract', () => {
  it("extracts a stored session's facts in one batched call, each fact naming its session and turn", async () => {
    const store = await sqliteStore();
    const stores = await openStores(store);
    const session = await stores.sessions.create(ALICE);
    await stores.sessions.transcriptAppend(ALICE, session.id, [
      { role: 'user', content: 'I moved to Lisbon last month.' },
      { role: 'assistant', content: 'Welcome to Lisbon!' },
      { role: 'user', content: 'I am allergic to peanuts.' },
      { role: 'assistant', content: 'Noted, no peanuts.' },
    ]);
    await stores.close();
    const both = {
      facts: [
        { turn: 0, content: 'Lives in Lisbon', category: 'user-profile/location', tags: ['city'] },
        { turn: 1, content: 'Is allergic to peanuts', category: 'user-profile/health', tags: ['allergy'] },
      ],
    };
    // Two runs (the dry run, then the real one), one call each: both turns are one batch.
    const model = await passModel({ memory_extraction_batch: [both, both] });
    cleanups.push(() => model.server.close());

    const dry = ok(
      await kioku(['extract', '--store', store, '--user', 'alice', '--session', session.id, '--dry-run'], {
        env: model.env,
      }),
    );
    expect(dry.stdout).toContain('Lives in Lisbon');
    expect(dry.stdout).toContain('Nothing was written.');
    expect(dry.stderr).toContain('turn 2 of 2');
    let check = await openStores(store);
    expect(await check.facts.count(ALICE)).toBe(0);
    const proposed = await new ChangesetLog(check.sessions).list(ALICE);
    expect(proposed.map((k) => [k.changeset.pass, k.changeset.status])).toEqual([['extraction', 'proposed']]);
    await check.close();

    ok(
      await kioku(['extract', '--store', store, '--user', 'alice', '--session', session.id], {
        env: model.env,
      }),
    );
    check = await openStores(store);
    const facts = await check.facts.list(ALICE);
    expect(
      facts.map((f) => [f.content, f.provenance.source, f.provenance.sessionId, f.provenance.turn]),
    ).toEqual([
      ['Lives in Lisbon', 'extraction', session.id, 0],
      ['Is allergic to peanuts', 'extraction', session.id, 1],
    ]);
    await check.close();
  });

  it("reads only the turns past the session's extraction watermark and advances it, so nothing is extracted twice", async () => {
    const store = await sqliteStore();
    let stores = await openStores(store);
    const session = await stores.sessions.create(ALICE);
    await stores.sessions.transcriptAppend(ALICE, session.id, [
      { role: 'user', content: 'I moved to Lisbon last month.' },
      { role: 'assistant', content: 'Welcome to Lisbon!' },
    ]);
    await stores.close();
    const model = await passModel({
      memory_extraction_batch: [
        { facts: [{ turn: 0, content: 'Lives in Lisbon', category: 'user-profile/location' }] },
        { facts: [{ turn: 1, content: 'Plays the cello on Tuesdays', category: 'personal/hobbies' }] },
      ],
    });
    cleanups.push(() => model.server.close());
    const extract = () =>
      kioku(['extract', '--store', store, '--user', 'alice', '--session', session.id], { env: model.env });
    const prompts = () =>
      model.server.received
        .filter((r) => r.path.endsWith('/chat/completions'))
        .map((r) => (r.body.messages as { content: string }[]).at(-1)!.content);

    ok(await extract());
    expect(prompts()).toHaveLength(1);
    // Already read: a second run asks the model nothing and writes nothing.
    const again = ok(await extract());
    expect(again.stdout).toContain(`Nothing to remember in session ${session.id}.`);
    expect(prompts()).toHaveLength(1);

    // A new turn: only it is read.
    stores = await openStores(store);
    await stores.sessions.transcriptAppend(ALICE, session.id, [
      { role: 'user', content: 'I play the cello on Tuesdays.' },
    ]);
    await stores.close();
    ok(await extract());
    expect(prompts()).toHaveLength(2);
    expect(prompts()[1]).toContain('<exchange turn="1">');
    expect(prompts()[1]).not.toContain('Lisbon');
    const check = await openStores(store);
    expect((await check.facts.list(ALICE)).map((f) => [f.content, f.provenance.turn])).toEqual([
      ['Lives in Lisbon', 0],
      ['Plays the cello on Tuesdays', 1],
    ]);
    await check.close();
  });

  it('with --batch 1 extracts turn by turn, one changeset per turn', async () => {
    const store = await sqliteStore();
    const stores = await openStores(store);
    const session = await stores.sessions.create(ALICE);
    await stores.sessions.transcriptAppend(ALICE, session.id, [
      { role: 'user', content: 'I moved to Lisbon last month.' },
      { role: 'assistant', content: 'Welcome to Lisbon!' },
      { role: 'user', content: 'I am allergic to peanuts.' },
    ]);
    await stores.close();
    const model = await passModel({
      memory_extraction: [
        { facts: [{ content: 'Lives in Lisbon', category: 'user-profile/location' }] },
        { facts: [{ content: 'Is allergic to peanuts', category: 'user-profile/health' }] },
      ],
    });
    cleanups.push(() => model.server.close());
    ok(
      await kioku(['extract', '--store', store, '--user', 'alice', '--session', session.id, '--batch', '1'], {
        env: model.env,
      }),
    );
    const check = await openStores(store);
    expect((await check.facts.list(ALICE)).map((f) => [f.content, f.provenance.turn])).toEqual([
      ['Lives in Lisbon', 0],
      ['Is allergic to peanuts', 1],
    ]);
    expect(await new ChangesetLog(check.sessions).list(ALICE)).toHaveLength(2);
    await check.close();
  });

  it("refuses another user's session", async () => {
    const store = await sqliteStore();
    const stores = await openStores(store);
    const bobs = await stores.sessions.create({ userId: 'bob' });
    await stores.close();
    const model = await passModel({});
    cleanups.push(() => model.server.close());
    const result = await kioku(['extract', '--store', store, '--user', 'alice', '--session', bobs.id], {
      env: model.env,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/NOT_FOUND: Session "[^"]+" is not one of user "alice"'s sessions/);
    expect(model.asked).toEqual([]);
  });
});

describe('where the user’s memory is', () => {
  it('dream --list in a partition with nothing says which agents hold the user’s facts', async () => {
    const store = await sqliteStore();
    const stores = await openStores(store);
    await stores.facts.create({ userId: 'demo-user', agentId: 'demo-agent' }, { content: 'Likes tea' });
    await stores.facts.create({ userId: 'demo-user', agentId: 'demo-agent' }, { content: 'Lives in Porto' });
    await stores.close();
    const listed = await kiokuInProcess(['dream', '--store', store, '--user', 'demo-user', '--list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('No kept changesets for user "demo-user".');
    expect(listed.stderr).toContain(
      'User "demo-user" has no facts without an agent; 2 facts are under agent "demo-agent" (add --agent demo-agent).',
    );
  });
});
