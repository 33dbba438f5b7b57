/**
 * The JSON Schema a model is shown for a tool's parameters, without the keywords that only validate.
 *
 * Every tool call is parsed with the tool's zod schema before its handler runs, and a refused argument
 * goes back to the model as a VALIDATION tool error naming it. Bounds (`minLength`, `maxLength`,
 * `maxItems`, `minimum`, `maximum`…) and patterns are therefore checked either way; sent with every
 * request they cost tokens on every model call (about a third of the tool definitions) and steer nothing.
 * What steers the model stays: types, enums, required keys and descriptions. A union of plain types
 * (`anyOf: [{type: string}, {type: integer}]`) becomes one `type` list.
 */
const VALIDATION_ONLY = new Set([
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
]);

export function compactSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compactSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (VALIDATION_ONLY.has(key)) continue;
    if (key === 'properties' && value !== null && typeof value === 'object') {
      // Property names are data, not keywords: keep every one, compact each schema.
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, compactSchema(s)]));
      continue;
    }
    out[key] = compactSchema(value);
  }
  const types = plainTypes(out.anyOf);
  if (types) {
    delete out.anyOf;
    out.type = types;
  }
  return out;
}

/** The type names of a union whose members are nothing but a type, else undefined. */
function plainTypes(anyOf: unknown): string[] | undefined {
  if (!Array.isArray(anyOf)) return undefined;
  const types: string[] = [];
  for (const member of anyOf) {
    if (member === null || typeof member !== 'object') return undefined;
    const keys = Object.keys(member);
    if (keys.length !== 1 || typeof (member as { type?: unknown }).type !== 'string') return undefined;
    types.push((member as { type: string }).type);
  }
  return types;
}
