type Schema = Record<string, unknown>;

/**
 * The smallest value a JSON Schema accepts, as the scripted model's answer to a structured request: the
 * required properties only, empty arrays (or `minItems` items), the first enum value or alternative, a
 * short string, the minimum number. Local `$ref`s (`#/$defs/…`, `#/definitions/…`) are followed.
 */
export function minimalInstance(schema: unknown, root: unknown = schema): unknown {
  if (typeof schema !== 'object' || schema === null) return null;
  const s = schema as Schema;
  if (typeof s.$ref === 'string') return minimalInstance(resolve(root, s.$ref), root);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const alternatives = (s.anyOf ?? s.oneOf ?? s.allOf) as unknown[] | undefined;
  if (Array.isArray(alternatives) && !s.type) return minimalInstance(alternatives[0], root);
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'null') : s.type;
  switch (type) {
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = (s.required ?? []) as string[];
      return Object.fromEntries(required.map((key) => [key, minimalInstance(properties[key], root)]));
    }
    case 'array':
      return Array.from({ length: Number(s.minItems ?? 0) }, () => minimalInstance(s.items, root));
    case 'string': {
      const text = 'example'.padEnd(Number(s.minLength ?? 0), '.');
      return s.maxLength === undefined ? text : text.slice(0, Number(s.maxLength));
    }
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function resolve(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`The scripted model follows local $refs only, not "${ref}".`);
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Schema | undefined)?.[key], root);
}
