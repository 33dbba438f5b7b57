import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import { type Reply, startScriptedServer, text } from '@kioku/openai-test-server';
import { kiokuArgv, packageDir } from './helpers.js';

/**
 * An OpenAI-compatible memory model for the worker tests: a batched extraction is answered with one fact
 * per `<exchange turn="N">`, the user's own words with that turn; a reconciliation adds every new fact. `asked` counts how often each
 * user message was sent for extraction (each must be once). An enrichment is answered with the saved text
 * under the category `personal/enriched`; `enriched` counts how often each saved text was sent.
 */
export async function echoModelServer() {
  const asked = new Map<string, number>();
  const enriched = new Map<string, number>();
  const route: Reply = (res, body, req) => {
    const messages = body.messages as { role: string; content: string }[];
    const prompt = messages.at(-1)!.content;
    if (prompt.startsWith('The saved memory:')) {
      // save_memory's enrichment: the saved text as one entry, filed under a category of its own.
      const content = prompt.split('Content:\n')[1]!;
      enriched.set(content, (enriched.get(content) ?? 0) + 1);
      const entries = [{ content, category: 'personal/enriched', tags: ['enriched'] }];
      return text(JSON.stringify({ entries }))(res, body, req);
    }
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
    for (const [, , u] of shown) asked.set(u!, (asked.get(u!) ?? 0) + 1);
    const facts = shown.map((m) => ({
      turn: Number(m[1]),
      content: m[2]!,
      category: 'personal/notes',
      tags: [],
    }));
    text(JSON.stringify({ facts }))(res, body, req);
  };
  const server = await startScriptedServer(route);
  return { server, asked, enriched, env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' } };
}

/** A child process with its output collected, and a wait for a line in it. */
export interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout has a line matching `pattern`; rejects when the process exits first. */
  line(pattern: RegExp): Promise<void>;
  exited: Promise<number | null>;
}

export function start(argv: string[], env: NodeJS.ProcessEnv = {}): Running {
  const child = spawn(process.execPath, argv, {
    cwd: packageDir,
    env: { ...process.env, KIOKU_DEBUG: '', ...env },
  });
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const w of [...waiters]) {
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    line: (pattern) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(out)) return resolve();
        waiters.push({ pattern, resolve });
        void exited.then((code) =>
          reject(new Error(`exited (${code}) before printing ${pattern}\n${out}\n${err}`)),
        );
      }),
  };
}

/** `kioku worker` from source. */
export function startWorker(store: string, env: NodeJS.ProcessEnv, extra: string[] = []): Running {
  return start(kiokuArgv(['worker', '--store', store, '--poll', '0.2', '--lease-ttl', '5', ...extra]), env);
}

/** The app of `fixtures/record-turns.ts`. */
export function startApp(store: string, users: number, turns: number): Running {
  const script = path.join(packageDir, 'test', 'fixtures', 'record-turns.ts');
  return start([
    '--conditions=@kioku/source',
    '--import',
    'tsx',
    script,
    store,
    String(users),
    String(turns),
  ]);
}

/** Polls `done` every 200 ms until it is true; throws with `what` after `attempts` tries. */
export async function eventually(what: string, done: () => Promise<boolean>, attempts = 1000): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Still not true after ${attempts} tries: ${what}`);
}
