import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isKiokuError, KiokuBuilder } from '../../src/index.js';
import { loadDirectives } from '../../src/memory/dream/directives.js';
import { DEFAULT_PREFERENCE_DIRECTIVE } from '../../src/memory/dream/preferences.js';
import { alice, scriptedJsonModel, seed, world } from './harness.js';

const dirs: string[] = [];
function dir(files: Record<string, string> = {}): string {
  const d = mkdtempSync(path.join(tmpdir(), 'kioku-directives-'));
  dirs.push(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(d, name), text);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>) {
  const error = await promise.catch((e: unknown) => e);
  if (!isKiokuError(error)) throw new Error(`expected a Kioku error, got ${String(error)}`);
  return { code: error.code, message: error.message, details: error.details };
}

describe('directive files', () => {
  it('reads dream.md, pref-dream.md and memory-rules.md when present; a missing file means the built-in', async () => {
    const d = dir({
      'dream.md': '\uFEFF# Consolidate\nMerge only exact duplicates.\n',
      'memory-rules.md': 'Expand.',
    });
    expect(await loadDirectives(d)).toEqual({
      consolidation: '# Consolidate\nMerge only exact duplicates.',
      memoryRules: 'Expand.',
    });
    expect(await loadDirectives(dir())).toEqual({});
  });

  it('an empty file, an unreadable file or a missing directory is an error naming it', async () => {
    const empty = dir({ 'pref-dream.md': '  \n' });
    const e1 = await failure(loadDirectives(empty));
    expect(e1.code).toBe('VALIDATION');
    expect(e1.message).toContain(path.join(empty, 'pref-dream.md'));
    expect(e1.details).toEqual({ file: path.join(empty, 'pref-dream.md') });

    const unreadable = dir();
    mkdirSync(path.join(unreadable, 'dream.md')); // a directory where the file should be
    const e2 = await failure(loadDirectives(unreadable));
    expect(e2.code).toBe('STORAGE');
    expect(e2.message).toContain(path.join(unreadable, 'dream.md'));

    const missing = path.join(dir(), 'nope');
    const e3 = await failure(loadDirectives(missing));
    expect(e3.code).toBe('VALIDATION');
    expect(e3.message).toContain(missing);
  });

  it('the builder’s directives directory replaces each pass’s prompt; a per-call directive wins', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['A fact']);
    const d = dir({ 'dream.md': 'Custom consolidation.', 'memory-rules.md': 'Custom enrichment.' });
    const model = scriptedJsonModel([{}, { preferences: [] }, {}]);
    const kioku = new KiokuBuilder({ stores, model, clock, directives: { directory: d } }).build();
    await kioku.passes.dream({ scope: alice, log: [{ text: 'Metric please.' }] });
    expect(model.prompts[0]![0]!.content.startsWith('Custom consolidation.\n')).toBe(true);
    expect(model.prompts[1]![0]!.content.startsWith(DEFAULT_PREFERENCE_DIRECTIVE)).toBe(true);
    expect((await kioku.passes.directives()).memoryRules).toBe('Custom enrichment.');

    await kioku.passes.dream({
      scope: alice,
      consolidation: { directive: 'Per call.' },
      preferences: { enabled: false },
    });
    expect(model.prompts[2]![0]!.content.startsWith('Per call.\n')).toBe(true);

    // Edited between dreams: read again at every dream.
    writeFileSync(path.join(d, 'dream.md'), '');
    expect((await failure(kioku.passes.dream({ scope: alice }))).code).toBe('VALIDATION');
  });
});
