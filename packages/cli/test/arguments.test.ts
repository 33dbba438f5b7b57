import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kiokuInProcess as kioku, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

/** `kioku reembed` with one thing wrong in each case. */
function reembedCases(store: string): [string[], RegExp][] {
  const index = 'qdrant:http://localhost:6333';
  const ok = ['--store', store, '--index', index, '--embedder', 'hashing'];
  const reembed = (...args: string[]) => ['reembed', ...args];
  return [
    [reembed('--index', index, '--embedder', 'hashing', '--all-users'), /--store is required/],
    [
      reembed('--store', store, '--embedder', 'hashing', '--all-users'),
      /--index is required, e\.g\. --index qdrant:/,
    ],
    [reembed('--store', store, '--index', index, '--all-users'), /--embedder is required/],
    [reembed(...ok), /Say whose memory to re-embed: --user <id> for one user, or --all-users/],
    [reembed(...ok, '--user', 'a', '--all-users'), /either --user <id> or --all-users, not both/],
    [
      reembed('--store', store, '--index', 'pinecone://x', '--embedder', 'hashing', '--all-users'),
      /Unknown vector index "pinecone:" in "pinecone:\/\/x"\. Use qdrant:http:\/\/localhost:6333/,
    ],
    [
      reembed('--store', store, '--index', 'http://localhost:6333', '--embedder', 'hashing', '--all-users'),
      /Say which index is at "http:\/\/localhost:6333": qdrant:http:\/\/localhost:6333/,
    ],
    [
      reembed('--store', store, '--index', 'memory', '--embedder', 'hashing', '--all-users'),
      /An in-memory vector index is gone when the command exits/,
    ],
    [
      reembed('--store', store, '--index', 'qdrant:ftp://h', '--embedder', 'hashing', '--all-users'),
      /write Qdrant's REST URL after qdrant:/,
    ],
    [
      reembed('--store', store, '--index', `${index}?collection=a/b`, '--embedder', 'hashing', '--all-users'),
      /\?collection="a\/b": a collection name has only letters, digits, _ and -/,
    ],
    [
      reembed('--store', store, '--index', `${index}?api-key=x`, '--embedder', 'hashing', '--all-users'),
      /Unknown parameter "api-key"/,
    ],
    [
      reembed('--store', store, '--index', index, '--embedder', 'word2vec', '--all-users'),
      /Unknown embedder "word2vec"\. Use one of: openai:text-embedding-3-small/,
    ],
    [reembed('--store', store, '--index', index, '--embedder', 'openai:', '--all-users'), /Name the model/],
    [
      reembed('--store', store, '--index', index, '--embedder', 'hashing:big', '--all-users'),
      /--embedder hashing:big: "big" is not a vector size/,
    ],
    [
      reembed(...ok, '--dimensions', '0', '--all-users'),
      /--dimensions: "0" is not a vector size; give an integer from 1 to 16384/,
    ],
    [
      reembed(
        '--store',
        store,
        '--index',
        index,
        '--embedder',
        'hashing:64',
        '--dimensions',
        '32',
        '--all-users',
      ),
      /hashing:64 and --dimensions 32 disagree/,
    ],
    [
      reembed(...ok, '--all-users', '--kinds', 'facts,sessions'),
      /Unknown kind "sessions" in --kinds; choose from facts, documents, details, transcript/,
    ],
    [reembed(...ok, '--all-users', '--check', '--dry-run'), /Give --check .* or --dry-run .*, not both/],
    [reembed(...ok, '--all-users', '--from', store), /Unknown option --from for "kioku reembed"/],
  ];
}

describe('argument errors', () => {
  it('exit with 2 and say what to type instead, never with a stack trace', async () => {
    const from = `json:${dir}`;
    const to = `sqlite:${path.join(dir, 'x.db')}`;
    const cases: [string[], RegExp][] = [
      [[], /Usage:/],
      [['migrat'], /Unknown command "migrat"; commands are init, migrate, export, import, reembed/],
      [['--from', from], /Start with a command: kioku init \| migrate \| export \| import \| reembed/],
      [['help', 'nope'], /No help for "nope"/],
      [['migrate', '--to', to, '--all-users'], /--from is required, e\.g\. --from json:\.\/data/],
      [['migrate', '--from', from, '--all-users'], /--to is required/],
      [
        ['migrate', '--from', from, '--to', to],
        /Say whose memory to copy: --user <id> for one user, or --all-users/,
      ],
      [
        ['migrate', '--from', from, '--to', to, '--user', 'a', '--all-users'],
        /either --user <id> or --all-users, not both/,
      ],
      [
        ['migrate', '--from', from, '--to', to, '--user', '../etc'],
        /--user "\.\.\/etc" is not a valid user id/,
      ],
      [
        ['migrate', '--from', from, '--to', to, '--all-users', '--kinds', 'facts,memories'],
        /Unknown kind "memories" in --kinds; choose from facts, documents, plans, working, sessions, details/,
      ],
      [
        ['migrate', '--from', from, '--to', to, '--all-users', '--kinds', ','],
        /--kinds needs at least one of/,
      ],
      [
        ['migrate', '--from', from, '--to', to, '--all-users', '--frm', 'x'],
        /Unknown option --frm for "kioku migrate"; it accepts --from, --to/,
      ],
      [['migrate', '--from', '--to', to, '--all-users'], /--from needs a value/],
      [['migrate', '--from', from, '--to', to, '--all-users=yes'], /--all-users takes no value/],
      [
        ['migrate', '--from', 'mysql://localhost/db', '--to', to, '--all-users'],
        /Unknown backend "mysql:" in "mysql:\/\/localhost\/db"\. Use one of: json:\.\/data, sqlite:\.\/kioku\.db/,
      ],
      [['migrate', '--from', './data', '--to', to, '--all-users'], /"\.\/data" is not a backend/],
      [
        ['migrate', '--from', 'sqlite::memory:', '--to', to, '--all-users'],
        /sqlite::memory: is gone when the command exits/,
      ],
      [
        ['migrate', '--from', 'postgres://[bad', '--to', to, '--all-users'],
        /"postgres:\/\/\[bad" is not a valid URL/,
      ],
      [
        ['migrate', '--from', from, '--to', `json:${dir}/`, '--all-users'],
        /--from and --to are the same storage/,
      ],
      [
        [
          'migrate',
          '--from',
          'postgres://h/db',
          '--to',
          'postgresql://h:5432/db?schema=kioku',
          '--all-users',
        ],
        /--from and --to are the same storage/,
      ],
      [['export', '--from', from, '--all-users', 'extra'], /Unexpected argument "extra" for "kioku export"/],
      [
        ['import', '--to', to],
        /import reads a bundle from stdin: kioku import --to <backend> < bundle\.json/,
      ],
      ...reembedCases(from),
    ];
    for (const [args, message] of cases) {
      const result = await kioku(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr).not.toContain('    at ');
    }
  });

  it('import --kinds must name kinds the bundle has', async () => {
    const result = await kioku(
      ['import', '--to', `json:${dir}`, '--kinds', 'facts'],
      '{"format":"kioku.bundle","schemaVersion":1,"stores":{"plans":{"format":"kioku.snapshot","schemaVersion":1,"kind":"plans","createdAt":"2025-01-01T00:00:00.000Z","selector":{"allUsers":true},"records":[]}}}',
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('The bundle has no facts snapshot; it holds plans.');
  });

  it('help, --help and --version exit with 0 on stdout', async () => {
    for (const args of [
      ['--help'],
      ['-h'],
      ['help'],
      ['help', 'import'],
      ['export', '--help'],
      ['reembed', '--help'],
      ['--version'],
    ]) {
      const result = await kioku(args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout.length).toBeGreaterThan(0);
    }
    expect((await kioku(['help', 'import'])).stdout).toContain(
      'kioku import --to sqlite:./kioku.db < alice.json',
    );
  });

  it('a missing SQLite source is not created', async () => {
    const result = await kioku(['export', '--from', `sqlite:${path.join(dir, 'typo.db')}`, '--all-users']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`kioku: NOT_FOUND: No SQLite database at ${path.join(dir, 'typo.db')}`);
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(dir)).toEqual([]);
  });

  it('a source that cannot be read leaves the target untouched', async () => {
    const target = path.join(dir, 'new.db');
    const result = await kioku([
      'migrate',
      '--from',
      'postgres://kioku@127.0.0.1:1/x',
      '--to',
      `sqlite:${target}`,
      '--all-users',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^kioku: STORAGE: .*\n {2}while reading from postgres:\/\/kioku@127\.0\.0\.1:1\/x\n$/,
    );
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(dir)).toEqual([]);
  });
});
