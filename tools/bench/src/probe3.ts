import { KiokuBuilder } from '@kioku/core';
import { createPostgresStores } from '@kioku/store-postgres';
const url = 'postgres://postgres@127.0.0.1:5432/postgres';
const stores = createPostgresStores({ url, schema: 'probe_rt', clientOptions: { max: 4, onnotice: () => {} } });
await stores.setup();
const list = stores.sessions.list.bind(stores.sessions);
let on = false;
(stores.sessions as any).list = (...a: any[]) => { if (on) console.log(new Error('list').stack?.split('\n').slice(2, 9).join('\n')); return list(...a); };
for (const m of ['get', 'transcriptRead', 'transcriptTail', 'kvGet', 'kvList']) {
  const f = (stores.sessions as any)[m]?.bind(stores.sessions);
  if (f) (stores.sessions as any)[m] = (...a: any[]) => { if (on) console.log(m, new Error('x').stack?.split('\n').slice(2, 7).join('\n')); return f(...a); };
}
const kioku = new KiokuBuilder({ stores, systemPrompt: 'You have a memory.' })
  .withFacts({ mode: 'relevant' }).withConversationHistory({ maxTurns: 5 }).withWorkingMemory().build();
const user = `p${Date.now()}`;
const c1 = await kioku.startConversation({ userId: user });
await c1.prepare('I live in Lisbon'); await c1.record([{ role: 'user', content: 'I live in Lisbon' }, { role: 'assistant', content: 'ok' }]);
on = true;
console.log('--- second conversation');
const c2 = await kioku.startConversation({ userId: user });
await c2.prepare('Where do I live?');
await stores.close();
