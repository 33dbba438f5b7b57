import { mkdir } from 'node:fs/promises';
import { OpenAIChatModel } from '@kioku/openai';
import { parseDemoArgs, USAGE } from './args.js';
import { chat, describeError } from './chat.js';
import { seedSandbox } from './sandbox.js';
import { buildKioku, openStores } from './stack.js';
import { runTour } from './tour.js';

async function main(): Promise<void> {
  const args = parseDemoArgs(process.argv.slice(2));
  if (args.help) {
    console.log(USAGE);
    return;
  }
  await mkdir(args.dataDir, { recursive: true });
  const connection = {
    ...(args.sqliteFile ? { sqliteFile: args.sqliteFile } : {}),
    ...(args.postgresUrl ? { postgresUrl: args.postgresUrl } : {}),
    ...(args.redisUrl ? { redisUrl: args.redisUrl } : {}),
  };
  const online = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
  if (args.tour || !online) {
    await runTour({ dataDir: args.dataDir, backends: args.backends, ...connection });
    return;
  }
  await seedSandbox(args.sandbox);
  const { stores, close } = await openStores({
    dataDir: args.dataDir,
    backends: args.backends,
    ...connection,
  });
  try {
    const kioku = buildKioku(stores, { sandbox: args.sandbox });
    const model = new OpenAIChatModel({ stream: true, ...(args.model ? { model: args.model } : {}) });
    await chat({
      kioku,
      stores,
      scope: { userId: args.userId, agentId: 'demo-agent' },
      model,
      resume: args.resume,
    });
  } finally {
    await close();
  }
}

main().catch((error: unknown) => {
  console.error(`kioku demo: ${describeError(error)}`);
  process.exitCode = 1;
});
