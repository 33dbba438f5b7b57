import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type Clock, type Embedder, ValidationError } from '@kioku/core';
import { redactUrl } from '@kioku/core/adapter';
import type { SnapshotSelector } from '@kioku/core/store';
import { checkAdapter } from './adapters.js';
import { parseCommandOptions, plural, required, userId, write } from './args.js';
import { type Backend, type BackendSpec, openBackend, parseBackend } from './backends.js';
import { makeBundle, parseBundle } from './bundle.js';
import { type KindReport, restoreKinds, snapshotKinds } from './copy.js';
import { loadEmbedder, parseEmbedder } from './embedders.js';
import { EXIT_MISMATCH, formatError, UsageError } from './errors.js';
import { forgetCommand } from './forget-command.js';
import { type IndexSpec, openIndex, parseIndex } from './indexes.js';
import { initCommand } from './init-command.js';
import { searchCommand, statsCommand, usersCommand } from './inspect-commands.js';
import type { CliIo } from './io.js';
import { KINDS, type Kind, parseKinds, parseVectorKinds, type VectorKind } from './kinds.js';
import { newTokenEntry, serveMcp } from './mcp.js';
import { dreamCommand, extractCommand } from './memory-commands.js';
import { quarantineCommand } from './quarantine-command.js';
import {
  checkModels,
  planReembed,
  reembedKinds,
  type VectorKindCheck,
  type VectorKindReport,
} from './reembed.js';
import { serveStudioCommand } from './studio.js';
import { COMMAND_USAGE, COMMANDS, type Command, MAIN_USAGE } from './usage.js';
import { workerCommand } from './worker.js';

/** An error with what the command was doing when it happened ("while writing plans to …"). */
class StepError extends Error {
  constructor(
    readonly step: string,
    readonly error: unknown,
  ) {
    super(step);
  }
}

const string = { type: 'string' } as const;
const flag = { type: 'boolean' } as const;
const help = { type: 'boolean', short: 'h' } as const;

const OPTIONS = {
  migrate: {
    from: string,
    to: string,
    user: string,
    'all-users': flag,
    kinds: string,
    'dry-run': flag,
    help,
  },
  export: {
    from: string,
    user: string,
    'all-users': flag,
    kinds: string,
    output: { ...string, short: 'o' },
    help,
  },
  import: { to: string, user: string, kinds: string, input: { ...string, short: 'i' }, help },
  reembed: {
    store: string,
    index: string,
    embedder: string,
    dimensions: string,
    user: string,
    'all-users': flag,
    kinds: string,
    'dry-run': flag,
    check: flag,
    help,
  },
  mcp: {
    store: string,
    user: string,
    agent: string,
    thread: string,
    tools: string,
    http: string,
    tokens: string,
    'allow-origin': { type: 'string', multiple: true },
    'allow-host': { type: 'string', multiple: true },
    'max-body': string,
    'max-output': string,
    index: string,
    embedder: string,
    dimensions: string,
    enrich: string,
    create: flag,
    help,
  },
  studio: {
    store: string,
    host: string,
    port: string,
    'read-only': flag,
    create: flag,
    'allow-remote': flag,
    'allow-host': { type: 'string', multiple: true },
    index: string,
    embedder: string,
    dimensions: string,
    help,
  },
} as const;

const TOKEN_OPTIONS = { user: string, agent: string, thread: string, help } as const;

function version(): string {
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
}

function isCommand(value: string): value is Command {
  return Object.hasOwn(COMMAND_USAGE, value);
}

/** node:util parseArgs, with its errors turned into short usage messages. */
function parseOptions<C extends keyof typeof OPTIONS>(command: C, args: string[]) {
  return parseCommandOptions(command, OPTIONS[command], args);
}

function selectorOf(values: { user?: string; 'all-users'?: boolean }, verb: string): SnapshotSelector {
  if (values.user !== undefined && values['all-users']) {
    throw new UsageError('Give either --user <id> or --all-users, not both.');
  }
  if (values.user !== undefined) return { userId: userId(values.user) };
  if (values['all-users']) return { allUsers: true };
  throw new UsageError(
    `Say whose memory to ${verb}: --user <id> for one user, or --all-users for every user.`,
  );
}

function who(selector: SnapshotSelector): string {
  return 'userId' in selector ? `user "${selector.userId}"` : 'all users';
}

function recordCount(n: number): string {
  return plural(n, 'record');
}

function countLine(kind: Kind, n: number): string {
  return `  ${kind.padEnd(10)} ${String(n).padStart(7)} record${n === 1 ? '' : 's'}\n`;
}

async function withBackend<T>(
  spec: BackendSpec,
  role: 'source' | 'target',
  clock: Clock | undefined,
  fn: (backend: Backend) => Promise<T>,
): Promise<T> {
  const open = () => openBackend(spec, { role, clock });
  const backend = await (role === 'source' ? read(spec, open) : open());
  try {
    return await fn(backend);
  } finally {
    await backend.close().catch(() => {});
  }
}

/** Run `fn`; a failure says what the command was doing (`what` is read when it fails). */
async function step<T>(what: string | (() => string), fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new StepError(typeof what === 'string' ? what : what(), error);
  }
}

function read<T>(spec: BackendSpec, fn: () => Promise<T>): Promise<T> {
  return step(`while reading from ${spec.label}`, fn);
}

/** Restore with progress lines; on failure say which kinds were written and which were not. */
async function restoreWithProgress(
  io: CliIo,
  target: Backend,
  envelopes: Parameters<typeof restoreKinds>[1],
  userIdOption: string | undefined,
): Promise<KindReport[]> {
  const done: Kind[] = [];
  const progress = progressPrinter(io);
  try {
    return await restoreKinds(target, envelopes, {
      userId: userIdOption,
      onKind: (report) => {
        done.push(report.kind);
        io.stdout.write(countLine(report.kind, report.records));
        if (report.suppressed) {
          io.stdout.write(
            `  (${report.suppressed} forgotten ${report.suppressed === 1 ? 'fact' : 'facts'} left out: on the user's suppression list)\n`,
          );
        }
      },
      onProgress: progress.update,
    });
  } catch (error) {
    const pending = (Object.keys(envelopes) as Kind[]).filter((k) => !done.includes(k));
    const written =
      done.length === 0
        ? 'nothing was written'
        : `${done.join(', ')} ${done.length === 1 ? 'was' : 'were'} written; ${pending.join(', ')} ${pending.length === 1 ? 'was' : 'were'} not (running the command again is safe)`;
    throw new StepError(`while writing to ${target.spec.label}: ${written}`, error);
  } finally {
    progress.stop();
  }
}

/** How often a long copy reports progress (ms); KIOKU_PROGRESS_MS overrides it (tests use 0: every step). */
const PROGRESS_MS = Number(process.env.KIOKU_PROGRESS_MS ?? 2_000);

/**
 * Progress of a copy on stderr (stdout stays the per-kind summary): records written of the kind being
 * written and the rate, at most every PROGRESS_MS and at least every PROGRESS_MS while a step runs long.
 */
function progressPrinter(io: CliIo) {
  const started = Date.now();
  let last = started;
  let current: { kind: Kind; written: number; total: number } | undefined;
  let writtenBefore = 0;
  const print = () => {
    if (!current) return;
    last = Date.now();
    const seconds = Math.max((last - started) / 1000, 0.001);
    const rate = Math.round((writtenBefore + current.written) / seconds);
    const n = (x: number) => x.toLocaleString('en-US');
    io.stderr.write(
      `  ${current.kind}: ${n(current.written)} of ${n(current.total)} records (${n(rate)} records/s)\n`,
    );
  };
  const timer = PROGRESS_MS > 0 ? setInterval(print, PROGRESS_MS) : undefined;
  timer?.unref();
  return {
    update: (kind: Kind, written: number, total: number) => {
      if (current && current.kind !== kind) writtenBefore += current.written;
      current = { kind, written, total };
      if (Date.now() - last >= PROGRESS_MS) print();
    },
    stop: () => clearInterval(timer),
  };
}

function total(reports: { records: number }[]): number {
  return reports.reduce((sum, r) => sum + r.records, 0);
}

async function migrate(args: string[], io: CliIo): Promise<number> {
  const values = parseOptions('migrate', args);
  if (values.help) return usage(io, 'migrate');
  const from = parseBackend(required(values.from, '--from', 'json:./data'));
  const to = parseBackend(required(values.to, '--to', 'sqlite:./kioku.db'));
  if (from.identity === to.identity)
    throw new UsageError(`--from and --to are the same storage (${from.label}).`);
  const selector = selectorOf(values, 'copy');
  const kinds = parseKinds(values.kinds);
  const dryRun = values['dry-run'] === true;

  // A missing target adapter is reported before anything is read; the target is opened only once the
  // source has been read in full (better-sqlite3 creates a file on open), and never in a dry run.
  if (to.type !== 'adapter') await checkAdapter(to.type);
  await write(
    io.stdout,
    `${dryRun ? 'Dry run: would copy' : 'Copying'} ${who(selector)} from ${from.label} to ${to.label}\n`,
  );
  const envelopes = await withBackend(from, 'source', io.clock, (source) =>
    read(from, () => snapshotKinds(source, kinds, selector)),
  );
  const found = total(kinds.map((kind) => ({ records: envelopes[kind]?.records.length ?? 0 })));
  if (found === 0 && 'userId' in selector) {
    // Most likely a mistyped id: say so rather than report "Copied 0 records." as a success.
    throw new Error(
      `No records of user "${selector.userId}" in ${from.label}; nothing was copied. Check the user id ` +
        `("kioku export --from ${from.label} --all-users" lists every user's records).`,
    );
  }
  if (dryRun) {
    const counts = kinds.map((kind) => ({ kind, records: envelopes[kind]?.records.length ?? 0 }));
    for (const { kind, records } of counts) io.stdout.write(countLine(kind, records));
    await write(io.stdout, `Would copy ${recordCount(total(counts))}; nothing was written.\n`);
    return 0;
  }
  const userIdOption = 'userId' in selector ? selector.userId : undefined;
  return withBackend(to, 'target', io.clock, async (target) => {
    const reports = await restoreWithProgress(io, target, envelopes, userIdOption);
    await write(io.stdout, `Copied ${recordCount(total(reports))}.\n`);
    return 0;
  });
}

async function exportCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseOptions('export', args);
  if (values.help) return usage(io, 'export');
  const from = parseBackend(required(values.from, '--from', 'json:./data'));
  const selector = selectorOf(values, 'export');
  const kinds = parseKinds(values.kinds);
  const envelopes = await withBackend(from, 'source', io.clock, (source) =>
    read(from, () => snapshotKinds(source, kinds, selector)),
  );
  const text = `${JSON.stringify(makeBundle(envelopes, io.clock), null, 2)}\n`;
  if (values.output !== undefined) await writeFile(values.output, text);
  else await write(io.stdout, text);
  const count = total(kinds.map((k) => ({ records: envelopes[k]?.records.length ?? 0 })));
  let report = `Exported ${recordCount(count)} of ${who(selector)} from ${from.label}${values.output ? ` to ${values.output}` : ''}\n`;
  for (const kind of kinds) report += countLine(kind, envelopes[kind]?.records.length ?? 0);
  await write(io.stderr, report);
  return 0;
}

async function readInput(io: CliIo, file: string | undefined): Promise<string> {
  if (file !== undefined) {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT'
          ? 'no such file'
          : code === 'EISDIR'
            ? 'it is a directory'
            : (error as Error).message;
      throw new UsageError(`Cannot read --input ${file}: ${why}.`);
    }
  }
  if (io.stdin.isTTY) {
    throw new UsageError(
      'import reads a bundle from stdin: kioku import --to <backend> < bundle.json (or --input bundle.json).',
    );
  }
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function importCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseOptions('import', args);
  if (values.help) return usage(io, 'import');
  const to = parseBackend(required(values.to, '--to', 'sqlite:./kioku.db'));
  const user = values.user === undefined ? undefined : userId(values.user);
  const wanted = values.kinds === undefined ? undefined : parseKinds(values.kinds);

  const text = (await readInput(io, values.input)).replace(/^\uFEFF/, '');
  if (text.trim() === '')
    throw new ValidationError('The input is empty; expected a bundle written by "kioku export".');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(
      `The input is not JSON (${(error as Error).message}); expected a bundle written by "kioku export".`,
    );
  }
  // Everything is validated before the target is even opened: a bad bundle writes nothing.
  const bundle = parseBundle(json);
  const present = KINDS.filter((k) => bundle.stores[k] !== undefined);
  const missing = (wanted ?? []).filter((k) => !present.includes(k));
  if (missing.length > 0) {
    throw new UsageError(
      `The bundle has no ${missing.join(', ')} snapshot; it holds ${present.join(', ') || 'none'}.`,
    );
  }
  const envelopes = Object.fromEntries((wanted ?? present).map((k) => [k, bundle.stores[k]]));

  return withBackend(to, 'target', io.clock, async (target) => {
    await write(io.stdout, `Importing ${user ? `user "${user}"` : 'the bundle'} into ${to.label}\n`);
    const reports = await restoreWithProgress(io, target, envelopes, user);
    await write(io.stdout, `Imported ${recordCount(total(reports))}.\n`);
    return 0;
  });
}

/** `  facts         6 records       6 vectors  in 2 partitions`, and what was removed. */
function vectorLine(r: VectorKindReport): string {
  const column = (n: number, word: string) => `${String(n).padStart(7)} ${n === 1 ? `${word} ` : `${word}s`}`;
  const removed = r.removed > 0 ? `, ${r.removed} old removed` : '';
  return `  ${r.kind.padEnd(10)} ${column(r.records, 'record')} ${column(r.vectors, 'vector')}  in ${plural(r.partitions, 'partition')}${removed}\n`;
}

/** The `--check` report: per kind, the models of the index's vectors next to the embedder's. */
function checkReport(checks: VectorKindCheck[], model: string): string {
  let out = '';
  for (const c of checks) {
    out += `  ${c.kind.padEnd(10)} ${recordCount(c.records)}, ${plural(c.vectors, 'vector')} expected in ${plural(c.partitions, 'partition')}\n`;
    if (c.models.length === 0) out += `${' '.repeat(13)}no vectors\n`;
    for (const m of c.models) {
      const whose = m.model === model ? "the embedder's" : 'another model';
      out += `${' '.repeat(13)}${String(m.count).padStart(7)}  ${m.model ?? '(no model recorded)'}  (${whose})\n`;
    }
  }
  const stale = checks.filter((c) => c.mismatch).map((c) => c.kind);
  return (
    out +
    (stale.length === 0
      ? `Every vector found was made by ${model}: nothing to rebuild.\n`
      : `${stale.join(', ')}: vectors of another model; hybrid searches of them fail (EmbeddingModelMismatchError) until they are rebuilt. Run the same command without --check.\n`)
  );
}

interface ReembedRun {
  from: BackendSpec;
  indexSpec: IndexSpec;
  embedder: Embedder;
  kinds: VectorKind[];
  selector: SnapshotSelector;
}

/** `--dry-run`: core's reembed() against nothing (see planReembed); the index is not opened. */
async function reembedDryRun(io: CliIo, { from, indexSpec, embedder, kinds, selector }: ReembedRun) {
  // Like migrate's target, the index is not opened in a dry run; a missing adapter is still reported.
  await checkAdapter(indexSpec.type);
  const model = embedder.modelId;
  await write(io.stdout, `Dry run: would re-embed ${who(selector)} from ${from.label} with ${model}\n`);
  const plans = await withBackend(from, 'source', io.clock, (backend) =>
    read(from, () => planReembed(backend, model, kinds, selector)),
  );
  for (const plan of plans) io.stdout.write(vectorLine(plan));
  const vectors = plans.reduce((sum, p) => sum + p.vectors, 0);
  await write(
    io.stdout,
    `Would write ${plural(vectors, 'vector')} to ${indexSpec.label}; nothing was embedded or written.\n`,
  );
  return 0;
}

/** `--check`: which models made the vectors; exit 3 when another model made some. */
async function reembedCheck(io: CliIo, { from, indexSpec, embedder, kinds, selector }: ReembedRun) {
  const opened = await openIndex(indexSpec, embedder.dimensions);
  const checks = await withBackend(from, 'source', io.clock, (backend) =>
    step(`while checking ${opened.label} against ${from.label}`, async () => {
      await opened.mustExist();
      return checkModels(backend, opened.index, embedder.modelId, kinds, selector);
    }),
  );
  await write(
    io.stdout,
    `Vectors of ${who(selector)} in ${opened.label}; the embedder's model is ${embedder.modelId}\n${checkReport(checks, embedder.modelId)}`,
  );
  return checks.some((c) => c.mismatch) ? EXIT_MISMATCH : 0;
}

/** The rebuild: setup() on the index, then kind by kind, printing each kind's counts as it is done. */
async function reembedRebuild(io: CliIo, { from, indexSpec, embedder, kinds, selector }: ReembedRun) {
  const opened = await openIndex(indexSpec, embedder.dimensions);
  return withBackend(from, 'source', io.clock, async (backend) => {
    await step(`while preparing ${opened.label}`, () => opened.setup());
    await write(
      io.stdout,
      `Re-embedding ${who(selector)} from ${from.label} into ${opened.label} with ${embedder.modelId}\n`,
    );
    const done: VectorKind[] = [];
    // A kind is rebuilt partition by partition: the one that failed may be rebuilt in part.
    const progress = () => {
      const pending = kinds.filter((k) => !done.includes(k));
      return `${done.length > 0 ? `${done.join(', ')} rebuilt; ` : ''}${pending.join(', ')} not rebuilt, or only in part (running the command again is safe)`;
    };
    const reports = await step(
      () => `while re-embedding ${from.label} into ${opened.label}: ${progress()}`,
      () =>
        reembedKinds(backend, opened.index, embedder, kinds, selector, {
          onKind: (report) => {
            done.push(report.kind);
            io.stdout.write(vectorLine(report));
          },
        }),
    );
    const vectors = reports.reduce((sum, r) => sum + r.vectors, 0);
    await write(io.stdout, `Wrote ${plural(vectors, 'vector')} with model ${embedder.modelId}.\n`);
    return 0;
  });
}

async function reembedCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseOptions('reembed', args);
  if (values.help) return usage(io, 'reembed');
  const from = parseBackend(required(values.store, '--store', 'json:./data'));
  const indexSpec = parseIndex(required(values.index, '--index', 'qdrant:http://localhost:6333'));
  const embedderSpec = parseEmbedder(
    required(values.embedder, '--embedder', 'openai:text-embedding-3-small'),
    values.dimensions,
  );
  const selector = selectorOf(values, 're-embed');
  const kinds = parseVectorKinds(values.kinds);
  if (values.check && values['dry-run']) {
    throw new UsageError(
      'Give --check (which models made the vectors in the index) or --dry-run (what a rebuild would write), not both.',
    );
  }
  const run = { from, indexSpec, embedder: await loadEmbedder(embedderSpec), kinds, selector };
  if (values['dry-run']) return reembedDryRun(io, run);
  if (values.check) return reembedCheck(io, run);
  return reembedRebuild(io, run);
}

async function usage(io: CliIo, command?: Command): Promise<number> {
  await write(io.stdout, `${command ? COMMAND_USAGE[command] : MAIN_USAGE}\n`);
  return 0;
}

async function mcpCommand(args: string[], io: CliIo): Promise<number> {
  if (args[0] === 'token') {
    const values = parseCommandOptions('mcp token', TOKEN_OPTIONS, args.slice(1));
    if (values.help) return usage(io, 'mcp');
    return newTokenEntry(values, io);
  }
  const values = parseOptions('mcp', args);
  if (values.help) return usage(io, 'mcp');
  return serveMcp(values, io);
}

const HANDLERS: Record<Command, (args: string[], io: CliIo) => Promise<number>> = {
  migrate,
  export: exportCommand,
  import: importCommand,
  reembed: reembedCommand,
  dream: (args, io) => dreamCommand(args, io, () => usage(io, 'dream')),
  extract: (args, io) => extractCommand(args, io, () => usage(io, 'extract')),
  forget: (args, io) => forgetCommand(args, io, () => usage(io, 'forget')),
  init: (args, io) => initCommand(args, io, () => usage(io, 'init')),
  quarantine: (args, io) => quarantineCommand(args, io, () => usage(io, 'quarantine')),
  users: (args, io) => usersCommand(args, io, () => usage(io, 'users')),
  stats: (args, io) => statsCommand(args, io, () => usage(io, 'stats')),
  search: (args, io) => searchCommand(args, io, () => usage(io, 'search')),
  worker: (args, io) => workerCommand(args, io, () => usage(io, 'worker')),
  mcp: mcpCommand,
  studio: async (args, io) => {
    const values = parseOptions('studio', args);
    return values.help ? usage(io, 'studio') : serveStudioCommand(values, io);
  },
};

/** Run `kioku <argv>`; resolves to the exit code. Errors are printed to `io.stderr`, never thrown. */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined) {
      await write(io.stderr, `${MAIN_USAGE}\n`);
      return 2;
    }
    if (first === '--help' || first === '-h') return await usage(io);
    if (first === 'help') {
      const topic = rest[0];
      if (topic === undefined) return await usage(io);
      if (!isCommand(topic))
        throw new UsageError(`No help for "${topic}": commands are ${COMMANDS.join(', ')}.`);
      return await usage(io, topic);
    }
    if (first === '--version' || first === '-v') {
      await write(io.stdout, `${version()}\n`);
      return 0;
    }
    if (!isCommand(first)) {
      throw new UsageError(
        first.startsWith('-')
          ? `Start with a command: kioku ${COMMANDS.join(' | ')} (got "${first}").`
          : `Unknown command "${first}"; commands are ${COMMANDS.join(', ')}.`,
      );
    }
    return await HANDLERS[first](rest, io);
  } catch (caught) {
    const step = caught instanceof StepError ? caught.step : undefined;
    const error = caught instanceof StepError ? caught.error : caught;
    const { text, exitCode } = formatError(error);
    let out = `${text}${step ? `\n  ${step}` : ''}\n`;
    if (process.env.KIOKU_DEBUG && error instanceof Error && error.stack) out += `${error.stack}\n`;
    // A driver's message may name the URL it was given, password and all: never printed as is.
    await write(io.stderr, redactUrl(out)).catch(() => {});
    return exitCode;
  }
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
}
