// `pnpm demo` (until apps/demo-agent lands): Kioku's stores used the way an agent would use them.
// Run it twice: the facts written in the first run are recalled in the second from ./.kioku-data.
import path from 'node:path';
import { currentThreadScope, InMemoryFactStore, isKiokuError, runWithScope } from '@kioku/core';
import { createJsonStores } from '@kioku/store-json';

const directory = process.env.KIOKU_DATA_DIR ?? path.resolve('.kioku-data');
const stores = createJsonStores({ directory });
const scope = { userId: 'demo-user', agentId: 'assistant' };

console.log(`Kioku quickstart — data in ${directory}\n`);

const known = await stores.facts.list(scope);
if (known.length === 0) {
  console.log('First run: remembering three facts about the user.');
  await stores.facts.create(scope, {
    content: 'User is in Chicago (America/Chicago, UTC-6)',
    category: 'user-preferences/timezone',
  });
  await stores.facts.create(scope, {
    content: 'User prefers short answers with code first',
    category: 'user-preferences/style',
  });
  await stores.facts.create(scope, {
    content: "Don't run the full test suite for doc-only changes — run the docs linter instead",
    category: 'anti-patterns/testing',
    tags: ['anti-pattern'],
  });
} else {
  console.log(`Later run: ${known.length} facts survived the restart.`);
}

const question = 'what time zone is the user in?';
const [best] = await stores.facts.search(scope, { query: question, limit: 3 });
console.log(
  `\nRecall for "${question}":\n  [${best?.fact.id}] (${best?.fact.category}): ${best?.fact.content}`,
);
console.log(
  '\nCategories:',
  (await stores.facts.categories(scope)).map((c) => `${c.category} (${c.count})`).join(', '),
);

// Tools read the user from the turn's async context — there is no global fallback.
await runWithScope({ userId: 'demo-user', threadId: 'thread-1' }, async () => {
  const plan = await stores.plans.create(currentThreadScope(), {
    goal: 'Plan a trip',
    steps: ['Pick dates', 'Book flights'],
  });
  console.log(
    `\nPlan ${plan.id}: ${plan.steps.map((s) => `[${s.id}] ${s.description} (${s.status})`).join(', ')}`,
  );
});

await stores.working.set(scope, 'session/s1/search-results', 'flight options…', {
  ttlMs: 60_000,
  tags: ['flights'],
});
const inventory = await stores.working.list(scope, 'session/s1');
console.log(`Working memory: ${inventory.map((e) => `${e.key} (expires ${e.expiresAt})`).join(', ')}`);

try {
  await stores.facts.create({ userId: '../../etc/passwd' }, { content: 'nope' });
} catch (error) {
  if (isKiokuError(error))
    console.log(`\nA hostile user id is refused: ${error.code} — ${error.message.split(':')[0]}`);
}

// Snapshots move memory between backends: JSON → in-memory here, JSON → Postgres in production.
const snapshot = await stores.facts.snapshot({ userId: 'demo-user' });
const copy = new InMemoryFactStore();
await copy.restore(snapshot);
console.log(
  `\nSnapshot of ${snapshot.records.length} facts restored into an in-memory store: ${(await copy.list(scope)).length} facts.`,
);
