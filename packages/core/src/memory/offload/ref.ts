/** What a `[MemoryRef: …]` placeholder names. */
export interface MemoryRef {
  id: string;
  description: string;
  tokens: number;
}

/** The placeholder of an offloaded output: `[MemoryRef: <id> - <description> - <N> tokens]`. */
export function formatMemoryRef(ref: MemoryRef): string {
  return `[MemoryRef: ${ref.id} - ${ref.description} - ${ref.tokens} tokens]`;
}

// The description may itself contain " - ", so it is matched greedily up to the last " - N tokens]".
const MEMORY_REF = /\[MemoryRef: ([^\s\]]+) - (.+) - (\d+) tokens\]/;

/** The first placeholder in `text`, or null. */
export function parseMemoryRef(text: string): MemoryRef | null {
  const match = MEMORY_REF.exec(text);
  if (!match) return null;
  return { id: match[1]!, description: match[2]!, tokens: Number(match[3]) };
}

const MEMORY_REFS = /\[MemoryRef: ([^\s\]]+) - ([^\]\n]+) - (\d+) tokens\]/g;

/** Every placeholder in `text`, in order (the same id may appear more than once). */
export function findMemoryRefs(text: string): MemoryRef[] {
  return [...text.matchAll(MEMORY_REFS)].map((m) => ({
    id: m[1]!,
    description: m[2]!,
    tokens: Number(m[3]),
  }));
}
