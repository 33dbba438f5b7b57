/**
 * The text Kioku finds an item by (the fact's content): the strings, numbers and booleans at the indexed
 * fields of the value, one per line. `fields` are LangGraph's index paths (`"$"` the whole value,
 * `"a.b"`, `"tags[*]"`); `false` indexes nothing, and the key is all there is to find it by.
 */
export function itemText(
  key: string,
  value: Record<string, unknown>,
  fields: readonly string[] | false,
): string {
  if (fields === false) return key;
  const texts = fields.flatMap((path) => leavesAt(value, path === '$' ? [] : path.split('.')));
  const text = texts.join('\n').trim();
  return text === '' ? key : text;
}

function leavesAt(value: unknown, path: readonly string[]): string[] {
  if (path.length === 0) return leaves(value);
  const [head, ...rest] = path as [string, ...string[]];
  const indexed = /^(.*)\[(\*|-?\d+)\]$/.exec(head);
  if (!indexed) return isObject(value) ? leavesAt(value[head], rest) : [];
  const [, name, index] = indexed as unknown as [string, string, string];
  const list = name === '' ? value : isObject(value) ? value[name] : undefined;
  if (!Array.isArray(list)) return [];
  if (index === '*') return list.flatMap((element) => leavesAt(element, rest));
  const at = Number(index);
  return leavesAt(list[at < 0 ? list.length + at : at], rest);
}

function leaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (isObject(value)) return Object.values(value).flatMap(leaves);
  return [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
