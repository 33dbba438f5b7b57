/**
 * What a README example may need besides itself. The example says so on a visible line, naming each server
 * and the environment variables a reader sets for it:
 *
 *   // Needs: PostgreSQL (DATABASE_URL)
 *   // Needs: PostgreSQL (DATABASE_URL), an OpenAI-compatible model (OPENAI_BASE_URL, OPENAI_API_KEY)
 *
 * readme-check starts or picks the matching test server and sets exactly those variables.
 */
export type Need = 'postgres' | 'pgvector' | 'redis' | 'qdrant' | 'model';

/** The server names a `// Needs:` line may use, and the variables readme-check sets for each. */
export const SERVERS: Readonly<Record<string, { need: Need; env: readonly string[] }>> = {
  PostgreSQL: { need: 'postgres', env: ['DATABASE_URL'] },
  'PostgreSQL with pgvector': { need: 'pgvector', env: ['DATABASE_URL'] },
  Redis: { need: 'redis', env: ['REDIS_URL'] },
  Qdrant: { need: 'qdrant', env: ['QDRANT_URL'] },
  'an OpenAI-compatible model': { need: 'model', env: ['OPENAI_BASE_URL', 'OPENAI_API_KEY'] },
};

const LINE = /^\s*\/\/\s*Needs:(.*)$/;
const ITEM = /\s*([^(),]+?)\s*\(([^)]*)\)\s*(?:,|$)/gy;

/** The needs of an example's `// Needs:` line (none without one); `at` places a malformed line. */
export function parseNeeds(code: string, at: string): Need[] {
  const lines = code.split('\n').filter((l) => LINE.test(l));
  if (lines.length === 0) return [];
  if (lines.length > 1) throw new Error(`${at}: one "// Needs:" line per example, not ${lines.length}.`);
  const list = lines[0]!.match(LINE)![1]!.trim();
  const needs: Need[] = [];
  ITEM.lastIndex = 0;
  let consumed = 0;
  for (let m = ITEM.exec(list); m; m = ITEM.exec(list)) {
    consumed = ITEM.lastIndex;
    const [, name, vars] = m as unknown as [string, string, string];
    const server = SERVERS[name];
    if (!server) {
      const known = Object.entries(SERVERS).map(([n, s]) => `${n} (${s.env.join(', ')})`);
      throw new Error(
        `${at}: "// Needs:" names "${name}", which readme-check cannot provide. Use: ${known.join('; ')}.`,
      );
    }
    const named = vars.split(',').map((v) => v.trim());
    const unknown = named.filter((v) => !server.env.includes(v));
    if (named.length === 0 || unknown.length > 0)
      throw new Error(`${at}: ${name} is reached through ${server.env.join(', ')}, not "${vars}".`);
    needs.push(server.need);
  }
  if (needs.length === 0 || consumed !== list.length)
    throw new Error(
      `${at}: write "// Needs: <server> (<VARIABLE>), …", e.g. "// Needs: PostgreSQL (DATABASE_URL)"; got "${list}".`,
    );
  return needs;
}
