import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scope } from '@kioku/core';
import type { SnapshotEnvelope } from '@kioku/core/store';
import type { ManualClock } from '@kioku/core/testing';
import { inject } from 'vitest';
import type { Backend, Kind } from '../src/index.js';
import { kiokuArgv } from './cli-entry.js';

export { kiokuArgv };

/** This run's PostgreSQL database ('' without a server: those tests skip, see global-setup.ts). */
export const pgUrl = inject('pgUrl');
export const redisUrl = inject('redisUrl');
export const redisPrefix = inject('redisPrefix');

/** A `postgres://` backend argument on this run's database, in a schema of its own. */
export function pgBackend(schema: string = `s_${randomBytes(5).toString('hex')}`): string {
  const url = new URL(pgUrl);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** A `redis://` backend argument under a prefix of its own inside the run's prefix. */
export function redisBackend(): string {
  const url = new URL(redisUrl);
  url.searchParams.set('prefix', `${redisPrefix}${randomBytes(4).toString('hex')}:`);
  return url.toString();
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kioku-cli-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const ALICE: Scope = { userId: 'alice' };
export const ALICE_CODER: Scope = { userId: 'alice', agentId: 'coder' };
export const BOB: Scope = { userId: 'bob', agentId: 'helper' };

const DAY = 24 * 60 * 60 * 1000;

/**
 * Every kind for two users (alice with and without an agent, bob with one): facts with categories, tags,
 * metadata and provenance (one updated), a document, a plan with steps, step notes and context notes (bob's
 * completed), working entries with long TTLs, a session with k-v and a transcript with tool calls, details
 * including a deactivated one. Quotes, SQL metacharacters and non-ASCII text throughout. The clock moves
 * between writes so timestamps and orders differ.
 */
export async function fillAllKinds(stores: Backend['stores'], clock: ManualClock): Promise<void> {
  for (const scope of [ALICE, ALICE_CODER, BOB]) {
    const tag = `${scope.userId}${scope.agentId ? `-${scope.agentId}` : ''}`;
    const tz = await stores.facts.create(scope, {
      title: 'Timezone',
      content: `User is in Chicago (America/Chicago, UTC-6) — ${tag}`,
      category: 'user-preferences/timezone',
      tags: ['time', 'location'],
      metadata: { confidence: 0.9, seen: ['chat', 2], nested: { ok: true, none: null } },
      provenance: { source: 'assistant', sessionId: 's1', toolName: 'create_memory' },
    });
    clock.advance(1_000);
    await stores.facts.create(scope, {
      content:
        "Don't use search_files for content search — instead use grep; it's `fast` \"really\" '; DROP TABLE x; --",
      category: 'anti-patterns/file-operations',
      tags: ['anti-pattern'],
    });
    clock.advance(1_000);
    await stores.facts.create(scope, { content: '日本語のメモ 🎉 記憶', category: 'general' });
    clock.advance(1_000);
    await stores.facts.update(scope, tz.id, { content: `User moved to Lisbon (Europe/Lisbon) — ${tag}` });
    clock.advance(1_000);

    await stores.documents.create(scope, {
      title: 'Employee handbook',
      description: 'HR rules',
      tags: ['hr', 'policy'],
      source: { type: 'file', uri: '/docs/handbook.md', mimeType: 'text/markdown' },
      metadata: { version: 3 },
      text: `# Handbook\n\nVacation is 28 days a year.\n\nSick leave: call your manager before 9:00.\n\n${'Filler sentence about office life. '.repeat(200)}`,
    });
    clock.advance(1_000);

    const thread = { ...scope, threadId: 'thread-1' };
    await stores.plans.create(thread, {
      goal: 'Build an online store website',
      steps: ['Define requirements', 'Choose tech stack', 'Design UI/UX'],
    });
    clock.advance(1_000);
    await stores.plans.updateStep(thread, '1', { status: 'completed', notes: 'React, Node.js, PostgreSQL' });
    clock.advance(1_000);
    await stores.plans.updateStep(thread, '2', { status: 'in_progress' });
    await stores.plans.addStep(thread, { description: 'Integrate payments', afterStepId: '2' });
    await stores.plans.addContextNote(thread, 'Need to integrate Stripe for payments');
    clock.advance(1_000);
    await stores.plans.addContextNote(thread, "Client's budget: 10k € (don't exceed)");
    if (scope === BOB) await stores.plans.complete(thread);
    clock.advance(1_000);

    await stores.working.set(scope, 'session/s1/inbox', '12 unread mails', {
      ttlMs: 7 * DAY,
      category: 'email',
      tags: ['inbox', 'unread'],
    });
    clock.advance(1_000);
    await stores.working.set(scope, 'patrol/heartbeat/latest-briefing', 'All quiet; nothing to report.', {
      ttlMs: 30 * DAY,
      category: 'patrol-finding',
    });
    clock.advance(1_000);

    const session = await stores.sessions.create(scope, {
      title: `Chat ${tag}`,
      metadata: { channel: 'web' },
    });
    await stores.sessions.kvSet(scope, session.id, 'city', 'Lisbon');
    clock.advance(1_000);
    await stores.sessions.kvSet(scope, session.id, 'kioku.recall.injected', '["a1","b2"]');
    clock.advance(1_000);
    await stores.sessions.kvSet(scope, session.id, 'city', 'Porto'); // an update moves the key to the end
    await stores.sessions.transcriptAppend(scope, session.id, [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'What files are in the repo?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call_1', name: 'list_directory', arguments: '{"path":"."}' },
          { id: 'call_2', name: 'read_file', arguments: '{"path":"README.md"}' },
        ],
      },
      { role: 'tool', content: 'src\ntest\npackage.json', toolCallId: 'call_1', name: 'list_directory' },
      { role: 'tool', content: '# Kioku', toolCallId: 'call_2', name: 'read_file' },
    ]);
    clock.advance(1_000);
    await stores.sessions.transcriptAppend(scope, session.id, [
      { role: 'assistant', content: 'Three entries: src, test and package.json.' },
    ]);
    clock.advance(1_000);

    const log = await stores.details.create(
      { ...scope, threadId: 'thread-1' },
      {
        description: 'run_command output (cmd: npm install)',
        summary: '200 lines. Begins: npm http fetch GET 200',
        content: 'npm http fetch GET 200 https://registry.npmjs.org/x\n'.repeat(50),
        metadata: { source: 'tool', tool: 'run_command', tokens: 900, arguments: { cmd: 'npm install' } },
      },
    );
    clock.advance(1_000);
    await stores.details.create(scope, {
      type: 'command_output',
      description: 'ls -la',
      content: 'total 0\ndrwxr-xr-x  2 root root',
    });
    clock.advance(1_000);
    await stores.details.deactivate(scope, log.id);
    clock.advance(1_000);
  }
  // Bare records (optional fields absent, which a table must not turn into nulls), at odd milliseconds.
  clock.advance(1_234);
  await stores.documents.create(ALICE, { title: 'Note', text: 'Short.' });
  clock.advance(7);
  const bare = await stores.sessions.create(ALICE);
  await stores.sessions.transcriptAppend(ALICE, bare.id, [{ role: 'user', content: 'hello' }]);
  await stores.working.set(ALICE, 'subagent/t1/research_results', '{"found": 3}', { ttlMs: 2 * DAY });
}

/** The key records are ordered by in a canonical snapshot: user, agent, thread, then id / key / session id. */
function sortKey(record: unknown): string {
  const r = record as Record<string, unknown> & { session?: Record<string, unknown> };
  const base = r.session ?? r;
  return [base.userId, base.agentId ?? '', base.threadId ?? '', base.id ?? r.key ?? '']
    .map((part) => String(part))
    .join('\u0000');
}

/**
 * A snapshot without its `createdAt` (when it was taken), records in a canonical order (backends may list
 * partitions differently) and as plain JSON (what a bundle file holds).
 */
export function canonical(envelope: SnapshotEnvelope<unknown> | undefined) {
  if (!envelope) throw new Error('no snapshot');
  const { createdAt: _ignored, records, ...header } = envelope;
  const sorted = [...records].sort((a, b) =>
    sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0,
  );
  return JSON.parse(JSON.stringify({ ...header, records: sorted })) as { kind: Kind; records: unknown[] };
}

export const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `kioku <args>` as a child process (built or from source: see cli-entry.ts). */
export function kioku(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; loadsTypeScript?: boolean } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, kiokuArgv(args, options), {
      cwd: packageDir,
      env: { ...process.env, KIOKU_DEBUG: '', ...options.env },
      timeout: 240_000, // below the 300 s test limit (vitest.shared.ts): a hung CLI reports first
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** Run `kioku <args>` in this process (fast; for argument handling), with its streams captured. */
export async function kiokuInProcess(args: string[], input?: string): Promise<CliResult> {
  const { PassThrough, Readable } = await import('node:stream');
  const { run } = await import('../src/index.js');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const stdin = Object.assign(Readable.from(input === undefined ? [] : [Buffer.from(input)]), {
    isTTY: input === undefined,
  });
  const code = await run(args, { stdout, stderr, stdin });
  return { code, stdout: out, stderr: err };
}
