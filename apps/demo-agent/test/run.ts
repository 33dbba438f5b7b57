import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach } from 'vitest';

const appDir = fileURLToPath(new URL('..', import.meta.url));

/** Run the demo CLI as a child process (tsx, source conditions), feeding `input` on stdin. */
export function runCli(
  args: string[],
  options: { env: Record<string, string | undefined>; input?: string; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // Only what the test passes: no endpoint, model, embedding or vector settings of the caller's shell.
    for (const name of Object.keys(env)) {
      if (/^(OPENAI_|QDRANT_|KIOKU_)/.test(name)) delete env[name];
    }
    for (const [k, v] of Object.entries(options.env)) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    const child = spawn(
      process.execPath,
      ['--conditions=@kioku/source', '--import', 'tsx', 'src/main.ts', ...args],
      { cwd: appDir, env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`CLI timed out.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 240_000); // below the 300 s test limit (vitest.shared.ts): a hung CLI reports first
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A fresh data folder for each test, removed afterwards with whatever `closeAfter` was given (a server). */
export function useDataDir(prefix: string) {
  let dataDir = '';
  let close: (() => Promise<void>) | undefined;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await close?.();
    close = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });
  return {
    get dataDir() {
      return dataDir;
    },
    closeAfter(fn: () => Promise<void>) {
      close = fn;
    },
  };
}
