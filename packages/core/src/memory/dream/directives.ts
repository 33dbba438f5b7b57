import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { StorageError, ValidationError } from '../../foundation/errors.js';

/** The directive file of each pass: its text replaces the pass's built-in instructions. */
export const DIRECTIVE_FILES = Object.freeze({
  /** Consolidation (dream pass 1). */
  consolidation: 'dream.md',
  /** Preference inference (dream pass 2). */
  preferences: 'pref-dream.md',
  /** Enrichment of saved memories (the expansion prompt of `save_memory`). */
  memoryRules: 'memory-rules.md',
});

/** Instructions that replace built-in prompts; a pass without one uses its own. */
export interface Directives {
  consolidation?: string;
  preferences?: string;
  memoryRules?: string;
}

/**
 * Read the directive files present in `directory` (`dream.md`, `pref-dream.md`, `memory-rules.md`). A
 * missing file leaves that pass on its built-in prompt. VALIDATION when the directory does not exist or a
 * file is empty; STORAGE when a file cannot be read — both name the path.
 */
export async function loadDirectives(directory: string): Promise<Directives> {
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new ValidationError(`The directives directory "${directory}" does not exist.`, {
      details: { directory },
    });
  }
  const out: Directives = {};
  for (const [pass, name] of Object.entries(DIRECTIVE_FILES) as [keyof Directives, string][]) {
    const file = path.join(directory, name);
    const text = await readDirective(file);
    if (text !== undefined) out[pass] = text;
  }
  return out;
}

async function readDirective(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StorageError(
      `The directive file "${file}" cannot be read: ${(error as Error).message ?? String(error)}`,
      { cause: error, details: { file } },
    );
  }
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') {
    throw new ValidationError(`The directive file "${file}" is empty.`, { details: { file } });
  }
  return trimmed;
}

/** Directives given as texts, or as a directory whose files are read each time. */
export type DirectivesOption = Directives | { directory: string };

/** The directives an option stands for: the texts, or the directory's files read now. */
export function resolveDirectives(option: DirectivesOption | undefined): Promise<Directives> {
  if (option === undefined) return Promise.resolve({});
  return 'directory' in option && typeof option.directory === 'string'
    ? loadDirectives(option.directory)
    : Promise.resolve(option as Directives);
}
