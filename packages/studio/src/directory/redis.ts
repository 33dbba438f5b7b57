import { PartitionCounter, pageOf, type UserDirectory } from './directory.js';

/**
 * store-redis's key layout: `<prefix><kind>:{<user>}:<agent>:…` (details: no agent part), every id part
 * `%`-encoded (`%XX`, `%uXXXX`) and `-` for no agent. See store-redis `keys.ts`.
 */
const KEY = /^(facts|documents|plans|working|sessions|details):\{([A-Za-z0-9_.@+%-]+)\}(?::([^:]+))?/;

function decodePart(encoded: string): string {
  return encoded.replace(/%u([0-9A-F]{4})|%([0-9A-F]{2})/g, (_m, wide: string | undefined, narrow: string) =>
    String.fromCharCode(Number.parseInt(wide ?? narrow, 16)),
  );
}

/** The users of a store-redis prefix (`kioku:` unless given), found by SCAN over a connection of its own. */
export async function redisDirectory(url: string, prefix = 'kioku:'): Promise<UserDirectory> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  return {
    async list(query) {
      const counter = new PartitionCounter();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const match = KEY.exec(key.slice(prefix.length));
          if (!match) continue;
          const agent = match[1] === 'details' || match[3] === '-' ? undefined : match[3];
          counter.add(decodePart(match[2]!), agent === undefined ? undefined : decodePart(agent));
        }
      } while (cursor !== '0');
      return pageOf(counter.values(), query);
    },
    async close() {
      redis.disconnect();
    },
  };
}
