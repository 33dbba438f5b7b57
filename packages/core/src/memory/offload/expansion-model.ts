import { z } from 'zod';
import { withDeadline } from '../../foundation/deadline.js';
import { isKiokuError } from '../../foundation/errors.js';
import type { ChatModel } from '../../model/chat-model.js';
import { generateObject } from '../../model/structured.js';
import type { MiddlewareContext } from '../../runtime/middleware.js';
import type { DetailRecord } from '../../store/details/record.js';
import { formatMemoryRef } from './ref.js';

const ChoiceSchema = z.object({
  /** The ids of the stored outputs the new message needs (none is a fine answer). */
  expand: z.array(z.string().max(300)).max(50),
});

const INSTRUCTIONS = `An assistant's conversation holds placeholders for large stored outputs ([MemoryRef: id - description - size]), each with a short summary. Decide which of them the assistant needs to read to handle the new message: only those whose content the message is about. Answer with their ids (an empty list when none is needed).`;

/** The refs a model says the message needs, or why it could not say (ids it invents are ignored). */
export async function chooseRefsWithModel(
  model: ChatModel,
  details: readonly DetailRecord[],
  ctx: Pick<MiddlewareContext, 'userMessage' | 'signal' | 'tokenizer'>,
  timeoutMs: number,
): Promise<{ ok: true; ids: ReadonlySet<string> } | { ok: false; code: string; message: string }> {
  const listing = details
    .map((d) => {
      const ref = formatMemoryRef({ id: d.id, description: d.description, tokens: d.tokenCount });
      return d.summary ? `${ref}\nSummary: ${ctx.tokenizer.truncate(d.summary, 120)}` : ref;
    })
    .join('\n\n');
  try {
    const { object } = await withDeadline(
      timeoutMs,
      ctx.signal,
      (signal) =>
        generateObject(model, {
          schema: ChoiceSchema,
          schemaName: 'memory_refs_to_expand',
          messages: [
            { role: 'system', content: INSTRUCTIONS },
            { role: 'user', content: `Placeholders:\n${listing}\n\nNew message:\n${ctx.userMessage}` },
          ],
          signal,
          tokenizer: ctx.tokenizer,
        }),
      'The expansion model',
    );
    const known = new Set(details.map((d) => d.id));
    return { ok: true, ids: new Set(object.expand.filter((id) => known.has(id))) };
  } catch (error) {
    if (ctx.signal?.aborted) throw error;
    const code = isKiokuError(error)
      ? error.code
      : typeof (error as { code?: unknown } | null)?.code === 'string'
        ? String((error as { code: string }).code)
        : 'MODEL_FAILED';
    return {
      ok: false,
      code,
      message: (error instanceof Error ? error.message : String(error)).slice(0, 300),
    };
  }
}
