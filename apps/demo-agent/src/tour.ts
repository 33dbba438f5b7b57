import { rm } from 'node:fs/promises';
import path from 'node:path';
import { type Conversation, HashingEmbedder, type Scope } from '@kioku/core';
import { parseMemoryRef } from '@kioku/core/adapter';
import { ManualClock } from '@kioku/core/testing';
import { describeToolTraffic, ledgerLine, showFacts, showPlan, showRefs, showWorking } from './inspect.js';
import { learnDocument, showDocuments } from './knowledge.js';
import { applyDream, revertChangeset, reviewDream } from './lifecycle.js';
import { seedSandbox } from './sandbox.js';
import { call, injectedBlock, injectedText, lastToolResult, ScriptedModel, say } from './scripted-model.js';
import { type Backend, buildKioku, type DemoStores, KINDS, type Kind, openStores } from './stack.js';
import { openVectors, rebuildVectors, withVectors } from './vectors.js';
import { wrapToWidth } from './wrap.js';

export interface TourOptions {
  dataDir: string;
  backends?: Record<Kind, Backend>;
  sqliteFile?: string;
  postgresUrl?: string;
  redisUrl?: string;
  out?: (line: string) => void;
}

/**
 * The offline tour: a scripted model walks through two sessions separated by a restart (every store
 * closed, a fresh stack opened on the same data). The memory is real; only the model is pre-written.
 * Hybrid recall runs on core's offline HashingEmbedder with the in-memory vector index, rebuilt at the
 * restart as the chat does it.
 */
export async function runTour(options: TourOptions): Promise<void> {
  // On a terminal, long lines wrap at its width between words (piped output is left as it is).
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  const print =
    options.out ??
    ((line: string) => process.stdout.write(`${columns ? wrapToWidth(line, columns) : line}\n`));
  // The tour's own folder, cleared each run so it tells the same story every time.
  const dataDir = path.join(options.dataDir, 'tour');
  await rm(dataDir, { recursive: true, force: true });
  const sandbox = path.join(dataDir, 'sandbox');
  await seedSandbox(sandbox);
  const backends =
    options.backends ?? (Object.fromEntries(KINDS.map((k) => [k, 'json'])) as Record<Kind, Backend>);
  // A clock the tour can move forward, so working memory visibly expires without waiting.
  const clock = new ManualClock(Date.now());
  const scope: Scope = { userId: 'tour-user', agentId: 'demo-agent' };
  const model = new ScriptedModel();
  const open = async () => {
    const opened = await openStores({
      dataDir,
      backends,
      clock,
      ...(options.sqliteFile ? { sqliteFile: options.sqliteFile } : {}),
      ...(options.postgresUrl ? { postgresUrl: options.postgresUrl } : {}),
      ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
    });
    const vectors = await openVectors(new HashingEmbedder(), { backend: 'memory' });
    return { ...opened, raw: opened.stores, stores: withVectors(opened.stores, vectors), vectors };
  };

  print('Kioku offline tour');
  print('══════════════════');
  print('No OPENAI_API_KEY or OPENAI_BASE_URL is set, so the model is a SCRIPTED local model: its replies');
  print('are pre-written. Everything else is real — stores, prompt pipeline, token budget, tools.');
  print(`Data: ${dataDir} (stores: ${KINDS.map((k) => `${k}=${backends[k]}`).join(', ')})`);
  print('Embeddings: HashingEmbedder, offline and LEXICAL, not semantic (it relates word pieces, so it');
  print('forgives typos, never synonyms); vectors in the in-memory index, rebuilt after the restart.\n');

  const turn = async (conversation: Conversation, userMessage: string) => {
    print(`you › ${userMessage}`);
    const result = await conversation.run(userMessage, model);
    for (const line of describeToolTraffic(result.messages)) print(line);
    print(`kioku › ${result.answer}`);
    print(`  ${ledgerLine(result.ledger)}\n`);
    return result;
  };
  const section = (title: string) => print(`── ${title} ${'─'.repeat(Math.max(0, 66 - title.length))}`);

  // ── Session 1 ────────────────────────────────────────────────────────────────────────────────
  let { stores, close } = await open();
  // Database backends outlive the folder: start the tour user from nothing there too.
  let kioku = buildKioku(stores, { sandbox, clock });
  await kioku.privacy.forgetUser(scope.userId);
  const first = await kioku.startConversation(scope);
  section(`Session 1 (${first.sessionId})`);

  print('1. A preference, saved as a fact');
  model.script(
    call('create_memory', { title: 'Units', content: 'User prefers metric units (km, kg, °C)' }),
    say("Noted — I'll use metric units from now on."),
  );
  await turn(first, 'Please remember that I prefer metric units.');

  print('2. A plan, created and advanced');
  model.script(
    call('create_plan', {
      goal: 'Summarise server.log and draft an incident report',
      steps: ['Read server.log', 'Count the errors', 'Draft the report'],
    }),
    call('update_plan_step', { step_id: '1', status: 'in_progress' }),
    say('Plan created; step 1 is in progress.'),
  );
  await turn(first, 'Plan this: summarise the server log, then draft an incident report.');

  print('3. A large tool output, offloaded behind a MemoryRef and retrieved by its ref');
  let errors: string[] = [];
  model.script(
    call('read_file', { path: 'server.log' }),
    call('retrieve_memory', (request) => {
      const ref = parseMemoryRef(lastToolResult(request));
      return { id: ref?.id ?? 'missing' };
    }),
    call('update_plan_step', (request) => {
      errors = lastToolResult(request)
        .split('\n')
        .filter((l) => l.includes(' ERROR '));
      return { step_id: '1', status: 'completed', notes: `read via MemoryRef; ${errors.length} ERROR lines` };
    }),
    call('update_plan_step', () => ({ step_id: '2', status: 'completed', notes: `${errors.length} errors` })),
    say(
      () =>
        `server.log has ${errors.length} errors, all payment gateway timeouts; first: ${errors[0]?.slice(0, 90)}`,
    ),
  );
  await turn(first, 'Read server.log from the sandbox and count the errors.');
  print(await showRefs(stores, scope));
  print(await showPlan(stores, scope, first.sessionId));
  print('');

  print('4. The sandbox refuses paths outside it');
  model.script(call('read_file', { path: '../../../etc/passwd' }), say('That file is outside my sandbox.'));
  await turn(first, 'Read ../../../etc/passwd');

  print('5. Working memory: a scratch note with a 5-minute TTL');
  model.script(
    call('save_to_working_memory', {
      key: 'error_count',
      data: `${errors.length} payment gateway timeouts in server.log`,
      ttl_minutes: 5,
    }),
    say('Saved to working memory for 5 minutes.'),
  );
  await turn(first, 'Keep a scratch note of the error count for a few minutes.');
  print(await showWorking(stores, scope));
  const noteVisible = (text: string) => text.includes('error_count');
  model.script(
    say((request) =>
      noteVisible(injectedText(request))
        ? 'My working memory still lists error_count.'
        : 'Nothing in working memory.',
    ),
  );
  await turn(first, 'What is in your scratch notes?');
  clock.advance(6 * 60_000);
  print('⏩ The tour moves its clock 6 minutes forward.');
  print(await showWorking(stores, scope));
  model.script(
    say((request) =>
      noteVisible(injectedText(request))
        ? 'My working memory still lists error_count.'
        : 'My working memory is empty now — the error_count note expired.',
    ),
  );
  await turn(first, 'What is in your scratch notes now?');

  await close();
  print('↻ Restart: every store is closed; a fresh stack opens the same data folder.\n');

  // ── Session 2 ────────────────────────────────────────────────────────────────────────────────
  const reopened = await open();
  ({ stores, close } = reopened);
  const { raw, vectors } = reopened;
  print(`The in-memory vector index starts empty. ${await rebuildVectors(stores, vectors, scope.userId)}\n`);
  kioku = buildKioku(stores, { sandbox, clock });
  const second = await kioku.startConversation(scope);
  section(`Session 2 (${second.sessionId}), after the restart`);
  print('6. The preference from session 1, recalled from memory');
  model.script(
    say((request) =>
      /metric/i.test(injectedText(request))
        ? 'You prefer metric units — it is in the memory Kioku injected ([DYNAMIC_MEMORY]).'
        : 'I do not know your preferred units.',
    ),
  );
  await turn(second, 'Which units do I prefer?');

  print(
    '7. Knowledge documents: a handbook learnt from the sandbox; the chunks that match the question are injected',
  );
  print('you › /learn handbook.md');
  print(await learnDocument(stores.documents, scope, sandbox, 'handbook.md'));
  print(await showDocuments(stores.documents, scope));
  model.script(
    say((request) => {
      const knowledge = injectedBlock(request, '[STATIC_KNOWLEDGE]');
      const parts = [...knowledge.matchAll(/^## (.+ \(part \d+\))$/gm)].map((m) => m[1]);
      print(`  [STATIC_KNOWLEDGE] injected, best first: ${parts.join(' · ')}`);
      const rule = /[^.]*\bFriday\b[^.]*\./.exec(knowledge)?.[0];
      return rule
        ? `The handbook Kioku injected says: "${rule.replace(/\s+/g, ' ').trim()}"`
        : 'Nothing I was given says so.';
    }),
  );
  await turn(second, 'Who has to approve a production deploy on a Friday?');

  print('8. Hybrid recall: a misspelt question still finds a fact');
  model.script(
    call('save_memory', {
      content: 'User deploys everything with Kubernetes',
      category: 'projects/infrastructure',
    }),
    say('Saved to long-term memory.'),
  );
  await turn(second, 'Remember that I deploy everything with Kubernetes.');
  const question = 'Do we use kuberntes?';
  const lexical = await raw.facts.search(scope, { query: question });
  const hybrid = await stores.facts.search(scope, { query: question });
  print(
    `  search "${question}": lexical alone finds ${lexical.length} facts; hybrid (lexical + vectors) finds`,
  );
  for (const hit of hybrid) print(`    ${hit.fact.content}`);
  model.script(
    say((request) => {
      const recalled = injectedBlock(request, '[RECALLED_MEMORY]');
      const shown = injectedBlock(request, '[DYNAMIC_MEMORY]');
      if (recalled) for (const line of recalled.split('\n')) print(`  ${line}`);
      else if (/Kubernetes/.test(shown)) {
        // Recall skips what the fact block (mode `all`) already shows: the fact is in the prompt once.
        print('  Recall found it too, and left it out: the [DYNAMIC_MEMORY] block already holds it.');
      }
      return /Kubernetes/.test(recalled) || /Kubernetes/.test(shown)
        ? 'Yes — you deploy everything with Kubernetes (found although "kuberntes" is misspelt).'
        : 'Nothing was recalled about that.';
    }),
  );
  await turn(second, question);
  print(
    'HashingEmbedder matched the word pieces of "kuberntes" and "Kubernetes", not their meaning: it would not',
  );
  print(
    'relate "car" to "automobile". With an endpoint, the demo embeds with a real model (text-embedding-3-small).\n',
  );
  print('9. The dream: the memory tidies itself — reviewed before anything is applied, and reversible');
  model.script(
    call('create_memory', {
      title: 'Clusters',
      content: 'Production clusters run on Kubernetes',
      category: 'projects/infrastructure',
    }),
    say('Noted.'),
  );
  await turn(second, 'Also remember: our production clusters run on Kubernetes.');
  // The consolidation pass numbers every fact with its id; the scripted model merges the two Kubernetes ones.
  model.script(
    say((request) => {
      const prompt = request.messages.at(-1)?.content ?? '';
      const ids = [...prompt.matchAll(/^\d+\. \[([^\]]+)\][^\n]*Kubernetes/gm)].map((m) => m[1]);
      return JSON.stringify({
        merges: [
          {
            sourceIds: ids,
            content: 'User deploys everything with Kubernetes, production clusters included',
            category: 'projects/infrastructure',
            tags: ['kubernetes'],
            reason: 'Two entries about the same deployment platform',
          },
        ],
      });
    }),
    say(JSON.stringify({ preferences: [] })),
  );
  print('you › /dream');
  const review = await reviewDream(kioku, scope, model);
  print(review.text);
  print('you › /dream apply');
  print(await applyDream(kioku, scope, review.proposed));
  print(await showFacts(stores, scope));
  const [merge] = review.proposed;
  print(`you › /revert ${merge}`);
  print(await revertChangeset(kioku, scope, merge!));
  print('');

  print('Facts about tour-user:');
  print(await showFacts(stores, scope));
  await close();
  print(
    '\nTour finished. Set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) and run `pnpm demo` to chat.',
  );
}

export type { DemoStores };
