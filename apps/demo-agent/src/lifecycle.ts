import type { BackgroundEvent, ChatModel, Kioku, Scope } from '@kioku/core';
import { type Changeset, formatChangeset } from '@kioku/core/passes';

/*
 * The memory life cycle in the chat: what background work did after a turn, the dream reviewed before it
 * is applied, changesets listed and reverted, feedback recorded.
 */

/** One line per change a background job made (or a line saying why it failed), for after a turn. */
export function describeBackground(events: readonly BackgroundEvent[]): string[] {
  const lines: string[] = [];
  for (const event of events) {
    if (event.type === 'failed') {
      lines.push(`  ✎ ${event.job.kind} failed (${event.code}): ${event.message} — nothing was changed`);
    } else if (event.type === 'refused') {
      lines.push(`  ✎ ${event.job.kind} skipped: the background queue is ${event.reason}`);
    } else if (event.type === 'done' && event.changeset && event.changeset.operations.length > 0) {
      lines.push(...changeLines(event.changeset, event.job.kind));
    }
  }
  return lines;
}

function changeLines(changeset: Changeset, kind: string): string[] {
  const lines = [`  ✎ ${kind} (changeset ${changeset.id}, /revert ${changeset.id} undoes it):`];
  for (const op of changeset.operations) {
    if (op.op === 'create') lines.push(`      + ${op.after.content}`);
    else if (op.op === 'update') lines.push(`      ~ ${op.before.content} → ${op.after.content}`);
    else if (op.op === 'delete') lines.push(`      - ${op.before.content}`);
    else lines.push(`      + document "${op.after.title}"`);
  }
  return lines;
}

/**
 * `/dream`: the dream as a dry run, its changesets kept as proposed and printed as diffs; `/dream apply`
 * applies what the last one proposed. The ids proposed are returned for that.
 */
export async function reviewDream(
  kioku: Kioku,
  scope: Scope,
  model: ChatModel,
): Promise<{ text: string; proposed: string[] }> {
  const result = await kioku.passes.dream({ scope, model, dryRun: true, keep: true });
  if (result.busy) {
    return {
      text: 'Another dream of your memory is running (another instance); try again later.',
      proposed: [],
    };
  }
  const parts: string[] = [];
  const proposed: string[] = [];
  for (const pass of result.passes) {
    if (pass.error)
      parts.push(`${pass.pass}: the model's answer was unusable (${pass.error.code}); nothing proposed.`);
    else if (pass.changeset && pass.changeset.operations.length > 0) {
      parts.push(formatChangeset(pass.changeset));
      proposed.push(pass.changeset.id);
    }
  }
  if (proposed.length === 0)
    return { text: [...parts, 'The dream has nothing to change.'].join('\n'), proposed };
  parts.push(
    'Nothing is applied yet. Type "/dream apply" to apply these changes; anything else keeps them for later.',
  );
  return { text: parts.join('\n\n'), proposed };
}

/** `/dream apply`: apply the changesets the last `/dream` proposed. */
export async function applyDream(kioku: Kioku, scope: Scope, ids: readonly string[]): Promise<string> {
  if (ids.length === 0) return 'Nothing to apply: run /dream first.';
  const lines: string[] = [];
  for (const id of ids) {
    const result = await kioku.passes.applyKept(scope, id);
    lines.push(
      `Applied changeset ${id}: ${result.applied.length} change${result.applied.length === 1 ? '' : 's'}` +
        (result.conflicts.length > 0
          ? `; ${result.conflicts.length} left alone because the fact changed since (${result.conflicts.map((c) => c.message).join('; ')})`
          : '') +
        `. /revert ${id} undoes it.`,
    );
  }
  return lines.join('\n');
}

/** `/changesets`: every kept changeset with its status. */
export async function listChangesets(kioku: Kioku, scope: Scope): Promise<string> {
  const kept = await kioku.passes.changesets(scope);
  if (kept.length === 0) return 'No changesets yet: the memory passes keep one for each change they make.';
  return kept
    .map(
      (k) =>
        `  ${k.changeset.id}  ${k.changeset.pass.padEnd(13)} ${k.changeset.status.padEnd(17)} ${k.changeset.operations.length} operation${k.changeset.operations.length === 1 ? '' : 's'}`,
    )
    .join('\n');
}

/** `/revert <id>`: undo an applied changeset exactly. */
export async function revertChangeset(kioku: Kioku, scope: Scope, id: string): Promise<string> {
  const result = await kioku.passes.revert(scope, id);
  return (
    `Reverted changeset ${id}: ${result.reverted.length} change${result.reverted.length === 1 ? '' : 's'} undone` +
    (result.conflicts.length > 0
      ? `; ${result.conflicts.length} left as they are (changed since): ${result.conflicts.map((c) => c.message).join('; ')}`
      : '.')
  );
}
