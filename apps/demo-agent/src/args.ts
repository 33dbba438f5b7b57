import path from 'node:path';
import { parseArgs } from 'node:util';
import { BACKENDS, type Backend, KINDS, type Kind } from './stack.js';

export interface DemoArgs {
  help: boolean;
  tour: boolean;
  resume: boolean;
  userId: string;
  dataDir: string;
  sandbox: string;
  backends: Record<Kind, Backend>;
  sqliteFile: string | undefined;
  postgresUrl: string | undefined;
  redisUrl: string | undefined;
  model: string | undefined;
}

export const USAGE = `Usage: pnpm demo [options]

  --user <id>          whose memory (default KIOKU_USER or "demo-user")
  --data-dir <dir>     JSON data folder (default KIOKU_DATA_DIR or ./.kioku-data)
  --sandbox <dir>      folder the file tools may read (default <data-dir>/sandbox)
  --store <backend>    backend for every memory kind: json | sqlite | postgres | redis (KIOKU_STORE)
  --facts|--plans|--working|--sessions|--details <backend>
                       backend for one kind (KIOKU_STORE_FACTS, …)
  --sqlite-file <f>    (KIOKU_SQLITE_FILE, default <data-dir>/kioku.sqlite)
  --postgres-url <u>   (DATABASE_URL)      --redis-url <u>   (REDIS_URL)
  --model <name>       (OPENAI_MODEL)
  --resume             continue the user's latest session instead of starting one
  --tour               run the offline tour even when an endpoint is configured

Without OPENAI_API_KEY and OPENAI_BASE_URL the demo runs the offline tour (a scripted model).`;

export function parseDemoArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): DemoArgs {
  const kindOptions = Object.fromEntries(KINDS.map((k) => [k, { type: 'string' as const }]));
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      tour: { type: 'boolean' },
      resume: { type: 'boolean' },
      user: { type: 'string' },
      'data-dir': { type: 'string' },
      sandbox: { type: 'string' },
      store: { type: 'string' },
      'sqlite-file': { type: 'string' },
      'postgres-url': { type: 'string' },
      'redis-url': { type: 'string' },
      model: { type: 'string' },
      ...kindOptions,
    },
    strict: true,
  });
  const dataDir = path.resolve(str(values['data-dir']) ?? env.KIOKU_DATA_DIR ?? '.kioku-data');
  const all = backend(str(values.store) ?? env.KIOKU_STORE ?? 'json', '--store');
  const backends = Object.fromEntries(
    KINDS.map((k) => [
      k,
      backend(
        str((values as Record<string, unknown>)[k]) ?? env[`KIOKU_STORE_${k.toUpperCase()}`] ?? all,
        `--${k}`,
      ),
    ]),
  ) as Record<Kind, Backend>;
  return {
    help: values.help === true,
    tour: values.tour === true,
    resume: values.resume === true,
    userId: str(values.user) ?? env.KIOKU_USER ?? 'demo-user',
    dataDir,
    sandbox: path.resolve(str(values.sandbox) ?? path.join(dataDir, 'sandbox')),
    backends,
    sqliteFile: str(values['sqlite-file']) ?? env.KIOKU_SQLITE_FILE,
    postgresUrl: str(values['postgres-url']) ?? env.DATABASE_URL,
    redisUrl: str(values['redis-url']) ?? env.REDIS_URL,
    model: str(values.model),
  };
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function backend(value: string, flag: string): Backend {
  if (!(BACKENDS as readonly string[]).includes(value)) {
    throw new Error(`${flag}: unknown backend "${value}" (use ${BACKENDS.join(', ')}).`);
  }
  return value as Backend;
}
