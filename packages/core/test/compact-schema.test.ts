import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { executeToolCall, toOpenAITool } from '../src/model.js';

const note = defineTool({
  name: 'note',
  description: 'Keep a note.',
  parameters: z.object({
    text: z.string().trim().min(1).max(10).describe('The note'),
    step: z.union([z.string().regex(/^[0-9]+$/), z.number().int().min(1)]).optional(),
    tags: z.array(z.string().min(1).max(5)).max(2).optional(),
    kind: z.enum(['a', 'b']),
  }),
  execute: ({ text }) => `kept ${text}`,
});

describe('the schema a model is shown for a tool', () => {
  it('keeps types, enums, required keys and descriptions, and drops what only validates', () => {
    expect(toOpenAITool(note).function.parameters).toEqual({
      type: 'object',
      properties: {
        text: { type: 'string', description: 'The note' },
        step: { type: ['string', 'integer'] },
        tags: { type: 'array', items: { type: 'string' } },
        kind: { type: 'string', enum: ['a', 'b'] },
      },
      required: ['text', 'kind'],
    });
  });

  it('still refuses what the dropped keywords said, when the call is parsed', async () => {
    const tools = new Map([[note.name, note]]);
    const scope = { userId: 'ann' };
    const tooLong = await executeToolCall(
      tools,
      { id: 'c1', name: 'note', arguments: JSON.stringify({ text: 'far too long a note', kind: 'a' }) },
      { scope },
    );
    expect(tooLong.isError).toBe(true);
    expect(tooLong.content).toContain('VALIDATION');
    expect(tooLong.content).toContain('text');
    const ok = await executeToolCall(
      tools,
      { id: 'c2', name: 'note', arguments: JSON.stringify({ text: 'short', kind: 'b', step: 2 }) },
      { scope },
    );
    expect(ok).toMatchObject({ isError: false, content: 'kept short' });
  });
});
