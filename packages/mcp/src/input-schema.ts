import type { Tool } from '@kioku/core';
import { toOpenAITool } from '@kioku/core/model';
import { z } from 'zod';

const cache = new WeakMap<Tool, z.ZodObject>();

/**
 * The input schema a Kioku tool is registered with: listed to clients as the tool's own JSON Schema (the
 * one a conversation sends a model), but letting every argument through to `executeToolCall`, which
 * validates it with the tool's zod schema. So a bad argument is answered the way a conversation answers
 * it — a JSON error with code `VALIDATION` and the path of each problem — rather than with the SDK's
 * own message, which has no code.
 */
export function listedInputSchema(tool: Tool): z.ZodObject {
  let schema = cache.get(tool);
  if (!schema) {
    const { parameters } = toOpenAITool(tool).function;
    // zod merges a schema's metadata into its JSON Schema, so this lists exactly `parameters`.
    schema = z.looseObject({}).meta({ additionalProperties: undefined, ...parameters });
    cache.set(tool, schema);
  }
  return schema;
}
