import { spawn } from 'node:child_process';

export interface Timed {
  phase: string;
  seconds: number;
}

/** Every phase's wall time, in the order they ended (printed as a table at the end of the check). */
export const timings: Timed[] = [];

/** Runs `fn`, recording its wall time under `phase`. */
export async function timed<T>(phase: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await fn();
  } finally {
    timings.push({ phase, seconds: (Date.now() - started) / 1000 });
  }
}

/**
 * Runs a command without blocking the event loop (so independent ones run side by side), echoing it;
 * resolves with its stdout, rejects with its whole output when it exits non-zero.
 */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  process.stdout.write(`$ ${command} ${args.join(' ')}  (${cwd})\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `install-check: \`${command} ${args.join(' ')}\` failed (${signal ?? `exit ${code}`}) in ${cwd}\n${stdout}${stderr}`,
          ),
        );
    });
  });
}
