import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defineTool, type Toolkit } from '@kioku/core';
import { z } from 'zod';

const MAX_READ_BYTES = 1024 * 1024;

/** Resolve `relative` inside `root`, refusing anything (including symlinks) that leads outside it. */
export async function resolveInSandbox(root: string, relative: string): Promise<string> {
  const base = await realpath(root);
  const target = path.resolve(base, relative);
  const real = await realpath(target).catch(() => target);
  for (const candidate of [target, real]) {
    if (candidate !== base && !candidate.startsWith(base + path.sep)) {
      throw new Error(`Refused: "${relative}" is outside the sandbox.`);
    }
  }
  return real;
}

/** read_file and list_directory, confined to `root`. Errors become tool errors the model sees. */
export function sandboxToolkit(root: string): Toolkit {
  const readFileTool = defineTool({
    name: 'read_file',
    description: 'Read a text file in the sandbox folder (path relative to the sandbox, at most 1 MiB).',
    parameters: z.object({ path: z.string().min(1).describe('e.g. "notes.md" or "logs/server.log"') }),
    async execute({ path: relative }) {
      const file = await resolveInSandbox(root, relative);
      const info = await stat(file);
      if (!info.isFile()) throw new Error(`"${relative}" is not a file.`);
      if (info.size > MAX_READ_BYTES)
        throw new Error(`"${relative}" is ${info.size} bytes; the limit is 1 MiB.`);
      return readFile(file, 'utf8');
    },
  });
  const listDirectory = defineTool({
    name: 'list_directory',
    description: 'List a folder in the sandbox: sub-folders end with "/", files show their size.',
    parameters: z.object({ path: z.string().default('.').describe('Folder relative to the sandbox.') }),
    async execute({ path: relative }) {
      const dir = await resolveInSandbox(root, relative);
      const entries = await readdir(dir, { withFileTypes: true });
      const lines = await Promise.all(
        entries
          .sort((a, b) => a.name.localeCompare(b.name))
          .map(async (e) =>
            e.isDirectory() ? `${e.name}/` : `${e.name} (${(await stat(path.join(dir, e.name))).size} bytes)`,
          ),
      );
      return lines.length > 0 ? lines.join('\n') : '(empty)';
    },
  });
  return { name: 'sandbox', tools: [readFileTool, listDirectory] };
}

/** A sandbox with a README and a server log big enough to be offloaded (about 3 000 tokens). */
export async function seedSandbox(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  const readme = path.join(root, 'README.md');
  if (!(await exists(readme))) {
    await writeFile(
      readme,
      '# Sandbox\n\nThe demo agent can read and list files in this folder, nothing outside it.\n',
    );
  }
  const log = path.join(root, 'server.log');
  if (!(await exists(log))) await writeFile(log, serverLog());
}

export function serverLog(): string {
  const lines: string[] = [];
  for (let i = 0; i < 240; i++) {
    const time = new Date(Date.UTC(2026, 0, 5, 9, 0, i * 7)).toISOString();
    const level = i % 40 === 17 ? 'ERROR' : i % 9 === 4 ? 'WARN' : 'INFO';
    const text =
      level === 'ERROR'
        ? `payment gateway timeout after 30000 ms (order ${1000 + i})`
        : level === 'WARN'
          ? `slow query on orders table: ${200 + i} ms`
          : `GET /api/orders/${1000 + i} 200 ${12 + (i % 30)} ms`;
    lines.push(`${time} ${level} ${text}`);
  }
  return `${lines.join('\n')}\n`;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
