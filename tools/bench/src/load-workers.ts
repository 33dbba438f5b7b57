/**
 * `bench:load --workers N`: real `kioku worker` processes on the bench's store, an OpenAI-compatible scripted
 * model for them to call, and the extraction audit (every acknowledged turn extracted exactly once).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KiokuStores } from '@kioku/core';
import { ExtractionOutbox } from '@kioku/core/passes';
import { ScriptedModel } from '@kioku/core/testing';
import { type Reply, startScriptedServer, text } from '@kioku/openai-test-server';

/** The mark a load turn's user message ends with, so the model and the audit can name its turn id. */
export const turnMark = (turnId: string) => `(turn ${turnId})`;
const TURN_MARK = /\(turn ([^)\s]+)\)/;

/**
 * The memory model: a batched extraction is answered with one fact per `<exchange turn="N">`, the user's
 * own words (their turn mark with them); a reconciliation adds every new fact. `asked` counts how often
 * each turn id was sent for extraction (as `packages/cli/test/worker.harness.ts` does per message).
 */
export async function extractionModelServer() {
  const asked = new Map<string, number>();
  const route: Reply = (res, body, req) => {
    const messages = body.messages as { role: string; content: string }[];
    const prompt = messages.at(-1)!.content;
    if (prompt.startsWith('New facts (')) {
      const count = Number(/^New facts \((\d+)\)/.exec(prompt)![1]);
      const decisions = Array.from({ length: count }, (_, i) => ({
        fact: i + 1,
        event: 'ADD',
        reason: 'new',
      }));
      return text(JSON.stringify({ decisions }))(res, body, req);
    }
    const shown = [...prompt.matchAll(/<exchange turn="(\d+)">\n<user>\n([\s\S]*?)\n<\/user>/g)];
    for (const [, , said] of shown) {
      const turnId = TURN_MARK.exec(said!)?.[1];
      if (turnId) asked.set(turnId, (asked.get(turnId) ?? 0) + 1);
    }
    const facts = shown.map((m) => ({
      turn: Number(m[1]),
      content: m[2]!,
      category: 'personal/notes',
      tags: [],
    }));
    text(JSON.stringify({ facts }))(res, body, req);
  };
  const server = await startScriptedServer(route);
  return { server, asked, env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-load' } };
}

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/cli');

/** `kioku worker`: the built CLI when there is one (what users run), else its source through tsx. */
function workerArgv(store: string, leaseTtl: number): string[] {
  const args = ['worker', '--store', store, '--poll', '0.5', '--lease-ttl', String(leaseTtl)];
  const built = path.join(cliDir, 'dist', 'cli.js');
  if (existsSync(built)) return [built, ...args];
  return ['--conditions=@kioku/source', '--import', 'tsx', path.join(cliDir, 'src', 'cli.ts'), ...args];
}

/** How one process of the run ended: `killed` by the bench (a fault), else its exit code or signal. */
export interface ProcessEnd {
  name: string;
  killed: boolean;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A process that ended without the bench killing it, or with a code other than 0: a crash. */
export const crashed = (end: ProcessEnd) => !end.killed && (end.code !== 0 || end.signal !== null);

/** N `kioku worker` processes; one can be killed (SIGKILL) and replaced; all stopped with SIGTERM. */
export class WorkerFleet {
  private readonly running = new Map<ChildProcess, { name: string; ended: Promise<ProcessEnd> }>();
  private readonly killedByBench = new Set<ChildProcess>();
  readonly ends: ProcessEnd[] = [];
  private started = 0;

  constructor(
    private readonly store: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly leaseTtl: number,
  ) {}

  start(count: number): void {
    for (let i = 0; i < count; i++) this.spawnOne();
  }

  private spawnOne(): void {
    const name = `worker ${this.started++}`;
    const child = spawn(process.execPath, workerArgv(this.store, this.leaseTtl), {
      cwd: cliDir,
      env: { ...process.env, KIOKU_DEBUG: '', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Its log, one line per user worked on: failures and store errors are shown as they come.
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (process.env.KIOKU_LOAD_WORKER_LOG || /failed|error/i.test(line))
          process.stderr.write(`  ${name}: ${line}\n`);
      }
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    const ended = new Promise<ProcessEnd>((resolve) =>
      child.once('exit', (code, signal) => {
        const end = { name, killed: this.killedByBench.has(child), code, signal };
        if (crashed(end)) process.stderr.write(`  ${name} exited (${code ?? signal}):\n${stderr}\n`);
        this.ends.push(end);
        this.running.delete(child);
        resolve(end);
      }),
    );
    this.running.set(child, { name, ended });
  }

  /** SIGKILL the oldest running worker (a lost machine) and start another in its place. */
  async killOne(): Promise<string | undefined> {
    const [child, entry] = [...this.running][0] ?? [];
    if (!child || !entry) return undefined;
    this.killedByBench.add(child);
    child.kill('SIGKILL');
    await entry.ended;
    this.spawnOne();
    return entry.name;
  }

  /** SIGTERM every worker and wait for them (SIGKILL after `graceMs`). */
  async stop(graceMs = 30_000): Promise<void> {
    const entries = [...this.running];
    for (const [child] of entries) child.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const [child] of entries) child.kill('SIGKILL');
    }, graceMs);
    await Promise.all(entries.map(([, e]) => e.ended));
    clearTimeout(timer);
  }
}

/**
 * The outbox now: sessions the store's pending index lists, and their turns past the extraction watermark
 * (what `kioku worker` has still to extract). A session's `since` is not the age of its oldest unextracted
 * turn while turns keep coming (it is cleared only when the worker caught up), so turns are counted. Counting
 * reads every pending entry: without workers (`turns: false`) every acknowledged turn is pending and the
 * read would grow through the run, taking CPU from the apps it measures.
 */
export async function backlog(
  stores: KiokuStores,
  options: { turns: boolean },
): Promise<{ sessions: number; turns?: number }> {
  const pending = await stores.sessions.listPending();
  if (!options.turns) return { sessions: pending.length };
  const outbox = new ExtractionOutbox({ stores, model: new ScriptedModel() });
  let turns = 0;
  for (const p of pending) {
    const scope = { userId: p.userId, ...(p.agentId !== undefined ? { agentId: p.agentId } : {}) };
    turns += (await outbox.pending(scope, p.sessionId)).length;
  }
  return { sessions: pending.length, turns };
}

/**
 * Every acknowledged turn's facts, per turn id (by the turn mark the model copied into each fact): never
 * extracted (none), extracted twice (more than one fact), and turns the model was asked for more than once
 * (a pass killed before it committed is asked again by the next worker: allowed, but counted).
 */
export async function extractionAudit(
  stores: KiokuStores,
  acknowledged: Record<string, readonly string[]>,
  asked: ReadonlyMap<string, number>,
) {
  let neverExtracted = 0;
  let extractedTwice = 0;
  let askedTwice = 0;
  for (const [userId, turns] of Object.entries(acknowledged)) {
    const facts = new Map<string, number>();
    for (const fact of await stores.facts.list({ userId })) {
      const turnId = TURN_MARK.exec(fact.content)?.[1];
      if (turnId) facts.set(turnId, (facts.get(turnId) ?? 0) + 1);
    }
    for (const turn of turns) {
      if (facts.has(turn)) continue;
      neverExtracted++;
      if (neverExtracted <= 5)
        process.stderr.write(`  never extracted: ${turn} (model asked ${asked.get(turn) ?? 0}×)\n`);
    }
    for (const [turn, n] of facts) {
      if (n <= 1) continue;
      extractedTwice++;
      if (extractedTwice <= 5)
        process.stderr.write(`  extracted ${n}×: ${turn} (model asked ${asked.get(turn) ?? 0}×)\n`);
    }
  }
  for (const n of asked.values()) if (n > 1) askedTwice++;
  return { neverExtracted, extractedTwice, askedTwice };
}
