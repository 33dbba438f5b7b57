/**
 * The packages behind each backend, vector index and embedder, the MCP server of `kioku mcp` and the web
 * page of `kioku studio`. They are optional peers of the CLI, imported only when a spec of their type (or
 * the command) is used.
 */
const ADAPTERS = {
  json: { role: 'backend', pkg: '@kioku/store-json', peers: [] },
  sqlite: { role: 'backend', pkg: '@kioku/store-sqlite', peers: ['better-sqlite3', 'drizzle-orm'] },
  postgres: { role: 'backend', pkg: '@kioku/store-postgres', peers: ['postgres', 'drizzle-orm'] },
  redis: { role: 'backend', pkg: '@kioku/store-redis', peers: ['ioredis'] },
  qdrant: { role: 'index', pkg: '@kioku/store-qdrant', peers: ['@qdrant/js-client-rest'] },
  openai: { role: 'embedder', pkg: '@kioku/openai', peers: ['openai'] },
  mcp: { role: 'command', pkg: '@kioku/mcp', peers: [] },
  studio: { role: 'command', pkg: '@kioku/studio', peers: [] },
} as const;

export type AdapterType = keyof typeof ADAPTERS;

export const LOADERS = {
  json: () => import('@kioku/store-json'),
  sqlite: () => import('@kioku/store-sqlite'),
  postgres: () => import('@kioku/store-postgres'),
  redis: () => import('@kioku/store-redis'),
  // The CLI builds the Qdrant client itself (no version-check request, no warning on stderr).
  qdrant: async () => {
    const [{ QdrantVectorIndex }, { QdrantClient }] = await Promise.all([
      import('@kioku/store-qdrant'),
      import('@qdrant/js-client-rest'),
    ]);
    return { QdrantVectorIndex, QdrantClient };
  },
  openai: () => import('@kioku/openai'),
  mcp: () => import('@kioku/mcp'),
  studio: () => import('@kioku/studio'),
} as const satisfies Record<AdapterType, () => Promise<unknown>>;

/**
 * Import an adapter package. The adapters are optional peers of the CLI, so a missing one (or a missing
 * driver it needs) is an ordinary situation: it becomes a message with the install command.
 */
export async function importAdapter<T>(type: AdapterType, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    const { role, pkg, peers } = ADAPTERS[type];
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec((error as Error).message)?.[1];
    const what = role === 'command' ? `"kioku ${type}"` : `The ${type}: ${role}`;
    throw new Error(
      `${what} needs ${pkg}${peers.length > 0 ? ` and its drivers ${peers.join(', ')}` : ''}` +
        `${missing ? ` (${missing} is not installed)` : ''}. Install them where @kioku/cli is installed:\n` +
        `  npm install ${[pkg, ...peers].join(' ')}`,
      { cause: error },
    );
  }
}

/** Check that an adapter and its drivers are installed, without opening anything. */
export async function checkAdapter(type: AdapterType): Promise<void> {
  await importAdapter<unknown>(type, LOADERS[type]);
}
