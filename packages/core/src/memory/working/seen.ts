import { ConflictError, isKiokuError } from '../../foundation/errors.js';
import type { ToolContext } from '../../model/tool.js';
import type { WorkingEntry, WorkingSetOptions } from '../../store/working/record.js';
import type { WorkingMemoryStore } from '../../store/working/store.js';

/*
 * The model rewrites entries it read (get_from_working_memory, a search preview). Its save is checked
 * against the version it read: an entry changed since (by another app instance or the app) is not
 * overwritten; the model is shown what it holds now and may save again.
 */

/** The id under which a conversation's `SeenVersions` keeps a working-memory entry (keys always have a `/`). */
export function seenWorkingId(key: string): string {
  return `working/${key}`;
}

/** Record what the model was shown of an entry. */
export function noteSeenEntry(context: Pick<ToolContext, 'seen'>, entry: WorkingEntry): void {
  context.seen?.note({ id: seenWorkingId(entry.key), version: entry.version });
}

/** `set`, checked against the version the model read (if it read the key); CONFLICT shows the entry now. */
export async function saveSeenEntry(
  store: WorkingMemoryStore,
  context: Pick<ToolContext, 'seen' | 'scope'>,
  key: string,
  value: string,
  options: WorkingSetOptions,
): Promise<WorkingEntry> {
  const id = seenWorkingId(key);
  const expectedVersion = context.seen?.versionOf(id);
  try {
    const entry = await store.set(context.scope, key, value, {
      ...options,
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
    });
    noteSeenEntry(context, entry);
    return entry;
  } catch (error) {
    if (!isKiokuError(error, 'CONFLICT')) throw error;
    const current = await store.get(context.scope, key);
    // The model now knows what the key holds: a second save is checked against that (or is a plain write).
    if (current) noteSeenEntry(context, current);
    else context.seen?.forget(id);
    throw new ConflictError(
      current
        ? `"${key}" changed since you read it; it now holds: ${JSON.stringify(current.value)}. If your data still applies, call save_to_working_memory again.`
        : `"${key}" expired or was deleted since you read it. If your data still applies, call save_to_working_memory again.`,
      { details: { key, version: current?.version ?? 0 } },
    );
  }
}
