import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PartitionCounter, pageOf, type UserDirectory } from './directory.js';

/** store-json's folder names: an upper-case letter is stored as `^` + its lower case. See its `paths.ts`. */
function decodeSegment(name: string): string {
  return name.replace(/\^([a-z])/g, (_, c: string) => c.toUpperCase());
}

async function folders(directory: string): Promise<string[]> {
  try {
    return (await readdir(directory, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** The users of a store-json data directory: `users/<user>/` and `users/<user>/agents/<agent>/`. */
export function jsonDirectory(root: string): UserDirectory {
  return {
    async list(query) {
      const counter = new PartitionCounter();
      for (const user of await folders(path.join(root, 'users'))) {
        const userId = decodeSegment(user);
        counter.add(userId, undefined);
        for (const agent of await folders(path.join(root, 'users', user, 'agents'))) {
          counter.add(userId, decodeSegment(agent));
        }
      }
      return pageOf(counter.values(), query);
    },
    async close() {},
  };
}
