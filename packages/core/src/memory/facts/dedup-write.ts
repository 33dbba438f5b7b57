import { isKiokuError } from '../../foundation/errors.js';
import { LIMITS } from '../../foundation/limits.js';
import type { ToolContext } from '../../model/tool.js';
import {
  type DedupDecision,
  type DedupSettings,
  findNearDuplicate,
} from '../../store/facts/near-duplicate.js';
import type { Fact, FactInput } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { factText, markUntrusted } from '../trust/quarantine.js';

/** What a memory tool did with a new text: the fact it created, or the similar fact it skipped for or updated. */
export interface DedupWrite {
  decision: DedupDecision;
  fact: Fact;
}

/** The tool's words for a fact it created in quarantine, or '' for a trusted one. */
export function quarantineNotice(fact: Fact): string {
  const mark = fact.provenance.quarantine;
  return mark
    ? ` — quarantined: ${mark.reason ?? 'it reads like instructions to an AI'} (${mark.hits.map((h) => h.rule).join(', ')}), so it is not recalled until the user confirms it.`
    : '';
}

/**
 * Create a fact unless one of the user's facts already says it (`skipped`: that fact is returned) or says
 * part of it (`updated`: that fact gets the new content, title and the union of tags, checked against
 * the version the search read; its category and provenance stay). A fact that changed since it was read
 * is not overwritten: the new text is created instead. `dedup: null` always creates.
 *
 * A text that reads like instructions (`markUntrusted`) is created quarantined and never folded into a
 * trusted fact.
 */
export async function createWithDedup(
  store: FactStore,
  context: ToolContext,
  input: FactInput,
  dedup: DedupSettings | null,
): Promise<DedupWrite> {
  const { scope, seen } = context;
  // What the user typed in this turn is not an injection, whoever passes it on (extraction does the same).
  const userText = context.userMessage;
  const provenance =
    input.provenance &&
    markUntrusted(input.provenance, factText(input), userText !== undefined ? { userText } : {});
  if (provenance !== input.provenance) input = { ...input, provenance };
  if (dedup && !provenance?.quarantine) {
    const near = await findNearDuplicate(store, scope, input.content, dedup);
    const similar = near.similar;
    if (near.decision === 'skipped' && similar) {
      seen?.note(similar);
      return { decision: 'skipped', fact: similar };
    }
    if (near.decision === 'updated' && similar) {
      try {
        const fact = await store.update(
          scope,
          similar.id,
          {
            content: input.content,
            ...(input.title !== undefined ? { title: input.title } : {}),
            tags: [...new Set([...similar.tags, ...(input.tags ?? [])])].slice(0, LIMITS.tagCount),
          },
          { expectedVersion: similar.version },
        );
        seen?.note(fact);
        return { decision: 'updated', fact };
      } catch (error) {
        if (!isKiokuError(error, 'CONFLICT') && !isKiokuError(error, 'NOT_FOUND')) throw error;
      }
    }
  }
  const fact = await store.create(scope, input);
  seen?.note(fact);
  return { decision: 'created', fact };
}
