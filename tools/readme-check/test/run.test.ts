import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import {
  checkExample,
  driftHint,
  EXAMPLE_LIMIT_MS,
  importErrorHint,
  parseNeeds,
  provideServers,
  readmeExamples,
  runExample,
} from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const fixture = path.relative(root, path.join(here, 'fixtures/run/README.md'));
const [prints, fails, silent, moved, scripted] = readmeExamples(root, fixture, path.join(here, 'examples'));

describe.concurrent('running an example', { timeout: EXAMPLE_LIMIT_MS + 60_000 }, () => {
  it('runs it in a directory of its own, without server variables it did not ask for', async () => {
    vi.stubEnv('DATABASE_URL', 'postgres://not-for-examples@127.0.0.1/none');
    const result = await runExample(prints!, { env: {}, limitMs: EXAMPLE_LIMIT_MS });
    vi.unstubAllEnvs();
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('1 true undefined\n');
    expect(result.code).toBe(0);
    expect(await checkExample(prints!)).toBeUndefined();
  });

  it('fails with the README line, the exit code and its stderr at README lines', async () => {
    const failure = await checkExample(fails!);
    expect(failure).toMatch(new RegExp(`^${fixture}:${fails!.line} exited with code 1\n`));
    expect(failure).toContain('NotFoundError');
    expect(failure).toContain(`${fixture}:${fails!.line + 3}`);
  });

  it('fails an example that prints nothing', async () => {
    expect(await checkExample(silent!)).toBe(
      `${fixture}:${silent!.line} printed nothing: an example prints what it computes (console.log the result it shows).`,
    );
  });

  it('says plainly when an import no longer exists', async () => {
    expect(await checkExample(moved!)).toContain(
      'it imports NoSuchExport from @kioku/core, which no longer exports it; update the README',
    );
  });

  it('gives an example that needs a model the scripted one: its replies, then schema-shaped objects', async () => {
    expect(scripted!.needs).toEqual(['model']);
    const servers = await provideServers(scripted!);
    try {
      const result = await runExample(scripted!, { env: servers.env, limitMs: EXAMPLE_LIMIT_MS });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual(['scripted object', 'scripted text', { count: 2, tags: [] }]);
    } finally {
      await servers.stop();
    }
  });
});

describe('drift hints and server needs', () => {
  it('the compiler errors of a moved import say the README is out of date', () => {
    expect(importErrorHint(2305)).toMatch(/^the README's import is out of date/); // no exported member
    expect(importErrorHint(2724)).toMatch(/^the README's import is out of date/); // …, did you mean
    expect(importErrorHint(2307)).toMatch(/entry point its package does not have/); // cannot find module
    expect(importErrorHint(2322)).toBeUndefined();
  });

  it('names a missing entry point and a package that is not installed', () => {
    expect(
      driftHint(
        `Package subpath './store' is not defined by "exports" in /x/node_modules/@kioku/core/package.json`,
      ),
    ).toMatch(/^it imports @kioku\/core\/store, an entry point @kioku\/core does not have/);
    expect(driftHint(`Cannot find package '@kioku/nope' imported from /tmp/x/example.ts`)).toMatch(
      /^it imports @kioku\/nope, which is not installed for the examples/,
    );
    expect(driftHint(`Cannot find module '/tmp/src/index.js'`)).toBeUndefined();
  });

  it('reads a "// Needs:" line, and refuses servers and variables it cannot provide', () => {
    expect(parseNeeds('// Needs: PostgreSQL (DATABASE_URL)\nimport x from "y";', 'R.md:1')).toEqual([
      'postgres',
    ]);
    expect(
      parseNeeds('// Needs: Redis (REDIS_URL), an OpenAI-compatible model (OPENAI_API_KEY)', 'R.md:1'),
    ).toEqual(['redis', 'model']);
    expect(parseNeeds('import x from "y";', 'R.md:1')).toEqual([]);
    expect(() => parseNeeds('// Needs: MongoDB (MONGO_URL)', 'R.md:3')).toThrow(
      /^R\.md:3: "\/\/ Needs:" names "MongoDB", which readme-check cannot provide\. Use: PostgreSQL \(DATABASE_URL\)/,
    );
    expect(() => parseNeeds('// Needs: PostgreSQL (PG_URL)', 'R.md:3')).toThrow(
      'R.md:3: PostgreSQL is reached through DATABASE_URL, not "PG_URL".',
    );
    expect(() => parseNeeds('// Needs: PostgreSQL', 'R.md:3')).toThrow(
      /write "\/\/ Needs: <server> \(<VARIABLE>\)/,
    );
  });
});
