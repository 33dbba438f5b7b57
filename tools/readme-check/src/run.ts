import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReadmeExample } from './examples.js';
import { SERVER_VARIABLES } from './servers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const VITEST_CLI = path.join(path.dirname(require.resolve('vitest/package.json')), 'vitest.mjs');

/** Process groups of the examples running now: killed if this process exits first (a cancelled test run). */
const running = new Set<number>();
process.on('exit', () => {
  for (const pid of running) killGroup(pid);
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** How a run ended, with what it printed. */
export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Killed at `limitMs`. */
  timedOut: boolean;
}

export interface RunOptions {
  /** Variables of the servers the example needs (see servers.ts). */
  env: Record<string, string>;
  /** The run is killed after this long: a limit for a hung example, far above any example's duration. */
  limitMs: number;
}

/**
 * Runs one example as a newcomer would: saved as `example.ts` (or its test file) in an empty directory of
 * its own with `{"type": "module"}` and the packages installed (this tool's node_modules, linked), run with
 * `node --import tsx` against the packages' source (`--conditions=@kioku/source`), or with `vitest run` for
 * a test file.
 * Files it writes land in that directory, which is removed after.
 */
export async function runExample(example: ReadmeExample, options: RunOptions): Promise<RunResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kioku-readme-'));
  try {
    const file = example.testFile ?? 'example.ts';
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
    await symlink(path.resolve(here, '../node_modules'), path.join(dir, 'node_modules'), 'dir');
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), `${example.code}\n`);
    const args = example.testFile
      ? [VITEST_CLI, 'run', '--config', path.resolve(here, '../vitest.examples.ts'), '--root', dir]
      : // tsx as a loader of this process, not its CLI, which would start a second Node process.
        ['--import', 'tsx', '--conditions=@kioku/source', file];
    const result = await spawnLimited(args, dir, childEnv(options.env), options.limitMs);
    return { ...result, stderr: atReadme(result.stderr, dir, file, example) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The example's environment: this one, without the variables of servers it did not ask for (nor any
 * `OPENAI_*`: an example that reaches for a model without saying so fails), without vitest's own, plus
 * the ones of the servers it needs. No colours (Nx forces them), so errors read as text.
 */
function childEnv(servers: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (SERVER_VARIABLES.includes(key) || key.startsWith('OPENAI_') || key.startsWith('VITEST')) continue;
    if (['NODE_ENV', 'TEST', 'NODE_OPTIONS', 'FORCE_COLOR'].includes(key)) continue;
    env[key] = value;
  }
  return { ...env, ...servers, NO_COLOR: '1' };
}

function spawnLimited(args: string[], cwd: string, env: NodeJS.ProcessEnv, limitMs: number) {
  return new Promise<RunResult>((resolve, reject) => {
    // Its own process group, so a hung example is killed with everything it started.
    const child = spawn(process.execPath, args, {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid) running.add(child.pid);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid!);
    }, limitMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child.pid!);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

/** `…/kioku-readme-x/example.ts:7:12` in a stack trace becomes the README line it comes from. */
function atReadme(stderr: string, dir: string, file: string, example: ReadmeExample): string {
  const escaped = `${dir}/${file}`.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return stderr.replaceAll(
    new RegExp(`(?:file://)?${escaped}:(\\d+)(?::\\d+)?`, 'g'),
    (_, line: string) => `${example.readme}:${example.line + Number(line) - 1}`,
  );
}
