/**
 * The search claims of a README example: facts it stores (`facts.create(…, { content: '…' })`) and the
 * queries it then searches with (`facts.search(…, { query: '…' })`). An example that searches promises to
 * find what it stored; `test/search-claims.test.ts` runs each claim on the backend the README is about.
 */
export interface SearchClaim {
  contents: string[];
  query: string;
  /** The example searches with embeddings (an embedder in its code): the claim holds for hybrid search. */
  hybrid: boolean;
}

const CONTENT = /facts\.create\([^)]*?\{\s*content:\s*'([^']+)'/g;
const QUERY = /facts\.search\([^)]*?\{\s*query:\s*'([^']+)'/g;

export function searchClaims(code: string): SearchClaim[] {
  const contents = [...code.matchAll(CONTENT)].map((m) => m[1]!);
  if (contents.length === 0) return [];
  const hybrid = /Embedder\(/.test(code);
  return [...code.matchAll(QUERY)].map((m) => ({ contents, query: m[1]!, hybrid }));
}
