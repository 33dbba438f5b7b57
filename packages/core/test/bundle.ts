import { createInMemoryStores, type KiokuStores } from '../src/index.js';

/** An in-memory bundle with some kinds replaced by the test's own stores. */
export function bundleWith(parts: Partial<KiokuStores>): KiokuStores {
  return { ...createInMemoryStores(), ...parts };
}
