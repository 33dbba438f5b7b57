import { createHash } from 'node:crypto';
import { ValidationError } from '@kioku/core';

/**
 * Where LangGraph items live among a user's facts: every item's category starts with this segment, so
 * Kioku's own facts (what extraction and the memory tools write) are never listed as namespaces.
 */
export const NAMESPACE_ROOT = 'langgraph';

/** A category holds at most 8 segments: the root and 7 namespace labels. */
export const MAX_NAMESPACE_DEPTH = 7;

const KEPT = /[A-Za-z0-9_-]/;

/**
 * One namespace label as a category segment: letters, digits, `_` and `-` stay, every other UTF-8 byte is
 * written `.xx` (hex), and an `n` goes first because a segment must start with a letter or digit. The
 * encoding is one-to-one, so a category prefix is a namespace prefix.
 */
export function encodeLabel(label: string): string {
  let out = 'n';
  for (const char of label) {
    if (KEPT.test(char)) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `.${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

export function decodeLabel(segment: string): string {
  const bytes: number[] = [];
  for (let i = 1; i < segment.length; i++) {
    if (segment[i] === '.') {
      bytes.push(Number.parseInt(segment.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(segment.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The category of a namespace's items (the root alone for the empty namespace prefix). */
export function namespaceCategory(namespace: readonly string[]): string {
  if (namespace.length > MAX_NAMESPACE_DEPTH) {
    throw new ValidationError(
      `Namespace ${JSON.stringify(namespace)} has ${namespace.length} labels; KiokuStore keeps at most ${MAX_NAMESPACE_DEPTH}. Use a shorter namespace.`,
      { details: { namespace, max: MAX_NAMESPACE_DEPTH } },
    );
  }
  const category = [NAMESPACE_ROOT, ...namespace.map(encodeLabel)].join('/');
  if (category.length > 200) {
    throw new ValidationError(
      `Namespace ${JSON.stringify(namespace)} is too long: encoded it takes ${category.length} characters, a category at most 200. Use shorter labels.`,
      { details: { namespace } },
    );
  }
  return category;
}

/** The namespace a category holds, or undefined for a category that is not a LangGraph namespace. */
export function categoryNamespace(category: string): string[] | undefined {
  const [root, ...segments] = category.split('/');
  if (root !== NAMESPACE_ROOT || segments.length === 0) return undefined;
  return segments.map(decodeLabel);
}

/** The fact id of an item: the same namespace and key always name the same fact. */
export function itemFactId(namespace: readonly string[], key: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([namespace, key]))
    .digest('hex');
  return `lg-${digest.slice(0, 40)}`;
}
