import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveInSandbox, sandboxToolkit } from '../src/sandbox.js';

let root: string;
let outside: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'kioku-sandbox-'));
  outside = await mkdtemp(path.join(tmpdir(), 'kioku-outside-'));
  await mkdir(path.join(root, 'docs'));
  await writeFile(path.join(root, 'docs', 'a.md'), 'hello');
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await symlink(outside, path.join(root, 'escape'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('sandbox tools', () => {
  it('reads and lists inside the sandbox', async () => {
    const [read, list] = sandboxToolkit(root).tools;
    const ctx = { scope: { userId: 'u' }, toolCallId: 't' };
    expect(await read!.execute({ path: 'docs/a.md' }, ctx)).toBe('hello');
    expect(await list!.execute({ path: '.' }, ctx)).toContain('docs/');
    expect(await list!.execute({ path: 'docs' }, ctx)).toBe('a.md (5 bytes)');
  });

  it('refuses traversal, absolute paths and symlinks that lead outside', async () => {
    await expect(resolveInSandbox(root, '../x')).rejects.toThrow(/outside the sandbox/);
    await expect(resolveInSandbox(root, '/etc/passwd')).rejects.toThrow(/outside the sandbox/);
    await expect(resolveInSandbox(root, 'escape/secret.txt')).rejects.toThrow(/outside the sandbox/);
    await expect(resolveInSandbox(root, 'docs/../docs/a.md')).resolves.toContain('a.md');
  });
});
