import path from 'node:path';
import { provideServers, readmeExamples, repositoryReadmes, runExample, runFailure } from './src/index.ts';
const root = path.resolve('../..');
const filter = process.argv[2] ?? '';
const all = repositoryReadmes(root).flatMap((r) => readmeExamples(root, r, '/tmp/ex')).filter((e) => `${e.readme}:${e.line}`.startsWith(filter));
let next = 0;
const limit = Number(process.env.LIMIT ?? 60_000);
async function worker() {
  while (next < all.length) {
    const e = all[next++]!;
    const t = Date.now();
    try {
      const servers = await provideServers(e);
      let f, r;
      try { r = await runExample(e, { env: servers.env, limitMs: limit }); f = runFailure(e, r, servers.complaints()); } finally { await servers.stop(); }
      console.log(`${f ? 'FAIL' : 'ok  '} ${e.readme}:${e.line} ${((Date.now() - t) / 1000).toFixed(1)}s`);
      if (f) console.log(f.split('\n').slice(0, 40).join('\n').replace(/^/gm, '    '));
      else if (process.env.SHOW) console.log(r.stdout.split('\n').slice(-25).join('\n').replace(/^/gm, '  | '));
    } catch (err) { console.log(`ERR  ${e.readme}:${e.line} ${(err as Error).message}`); }
  }
}
await Promise.all([worker(), worker(), worker()]);
process.exit(0);
