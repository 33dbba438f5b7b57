/**
 * The first search of a really new process, for the Redis store bench (`src/store-redis.ts` runs it as a
 * child process): connects, then times one `RedisFactStore.search` and prints the milliseconds.
 * Arguments: Redis URL, key prefix, user id, query.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_REDIS_OPTIONS, RedisFactStore } from '@kioku/store-redis';
import { Redis } from 'ioredis';

const [url, prefix, userId, query] = process.argv.slice(2) as [string, string, string, string];
const client = new Redis(url, DEFAULT_REDIS_OPTIONS);
await client.ping(); // the connection is not part of the search
const store = new RedisFactStore({ client, prefix });
const t = performance.now();
await store.search({ userId }, { query });
process.stdout.write(`${performance.now() - t}\n`);
client.disconnect();
