import { mkdir } from 'node:fs/promises';
import { startTelemetry } from '@kioku/cli';
import type { BackgroundEvent, Kioku } from '@kioku/core';
import { OpenAIChatModel, OpenAIEmbedder } from '@kioku/openai';
import { aiSdkTurns, type TurnRunner } from './ai-sdk-turns.js';
import { type DemoArgs, parseDemoArgs, USAGE } from './args.js';
import { adviceFor, chat, describeError } from './chat.js';
import { knowledgeTarget, learnDocument } from './knowledge.js';
import { seedSandbox } from './sandbox.js';
import { buildKioku, openStores } from './stack.js';
import { startupEmbeddingError } from './startup-errors.js';
import { runTour } from './tour.js';
import { openVectors, rebuildVectors, type Vectors, withVectors } from './vectors.js';

async function main(): Promise<void> {
  const args = parseDemoArgs(process.argv.slice(2));
  if (args.help) {
    console.log(USAGE);
    return;
  }
  await mkdir(args.dataDir, { recursive: true });
  // OTEL_EXPORTER_OTLP_ENDPOINT set: the turns, stages, store calls and memory passes go out as OTLP.
  const telemetry = await startTelemetry('kioku-demo');
  if (telemetry) console.log(`Exporting OpenTelemetry traces and metrics to ${telemetry.endpoint}.`);
  try {
    await demo(args);
  } finally {
    await telemetry?.shutdown();
  }
}

async function demo(args: DemoArgs): Promise<void> {
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
  const opened = await openStores({
    dataDir: args.dataDir,
    backends: args.backends,
    ...connection,
  });
  let vectors: Vectors | undefined;
  try {
    const scope = { userId: args.userId, agentId: 'demo-agent' };
    vectors = args.embeddings ? await openEmbeddings(args) : undefined;
    const stores = withVectors(opened.stores, vectors);
    if (vectors?.backend === 'memory') {
      console.log(
        await rebuildVectors(stores, vectors, args.userId).catch((error: unknown) => {
          throw startupEmbeddingError(error, args.embeddingModel, process.env.OPENAI_BASE_URL);
        }),
      );
    }
    // Every --knowledge source is checked before any is learnt: one refused source saves nothing.
    for (const source of args.knowledge) await knowledgeTarget(args.sandbox, source);
    for (const source of args.knowledge) {
      console.log(await learnDocument(stores.documents, scope, args.sandbox, source));
    }
    const model = new OpenAIChatModel({ stream: true, ...(args.model ? { model: args.model } : {}) });
    // Memory work asks for JSON objects, one at a time: a model of its own, not streaming, at temperature 0.
    const memoryModel = new OpenAIChatModel({
      temperature: 0,
      ...((args.memoryModel ?? args.model) ? { model: args.memoryModel ?? args.model } : {}),
    });
    const background: BackgroundEvent[] = [];
    const kioku = buildKioku(stores, {
      sandbox: args.sandbox,
      memoryModel,
      onBackground: (event) => background.push(event),
    });
    await chat({
      kioku,
      stores,
      scope,
      model,
      memoryModel,
      background,
      ...(await turnsOf(args.framework, kioku, model, scope.agentId)),
      resume: args.resume,
      sandbox: args.sandbox,
      dataDir: args.dataDir,
      vectors,
    });
  } finally {
    await vectors?.close?.();
    await opened.close();
  }
}

/**
 * What runs the chat's turns when it is not core's `conversation.run` (`--framework`). LangGraph and
 * Mastra are loaded only when chosen (each adds seconds to the start).
 */
async function turnsOf(
  framework: DemoArgs['framework'],
  kioku: Kioku,
  model: OpenAIChatModel,
  agentId: string,
): Promise<{ turns?: TurnRunner }> {
  if (framework === 'ai-sdk') return { turns: aiSdkTurns(model) };
  if (framework === 'langgraph') {
    const { langgraphTurns } = await import('./langgraph-turns.js');
    return { turns: langgraphTurns(kioku, model, agentId) };
  }
  if (framework === 'mastra') {
    const { mastraTurns } = await import('./mastra-turns.js');
    return { turns: mastraTurns(kioku, model, agentId) };
  }
  return {};
}

function openEmbeddings(args: DemoArgs): Promise<Vectors> {
  let embedder: OpenAIEmbedder;
  try {
    embedder = new OpenAIEmbedder({
      model: args.embeddingModel,
      ...(args.embeddingDimensions ? { dimensions: args.embeddingDimensions } : {}),
    });
  } catch (error) {
    throw new Error(`${describeError(error)} Pass --embedding-dimensions <n>, or --embeddings off.`, {
      cause: error,
    });
  }
  return openVectors(embedder, {
    backend: args.vectors,
    ...(args.qdrantUrl ? { qdrantUrl: args.qdrantUrl } : {}),
    ...(args.qdrantApiKey ? { qdrantApiKey: args.qdrantApiKey } : {}),
    ...(args.qdrantCollection ? { qdrantCollection: args.qdrantCollection } : {}),
    ...(args.postgresUrl ? { postgresUrl: args.postgresUrl } : {}),
  });
}

main().catch((error: unknown) => {
  console.error(`kioku demo: ${describeError(error)}${adviceFor(error)}`);
  process.exitCode = 1;
});
