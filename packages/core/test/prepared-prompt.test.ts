import { describe, expect, it, vi } from 'vitest';
import {
  type ChatMessage,
  type Conversation,
  conversationHistory,
  createInMemoryStores,
  factMemory,
  KiokuBuilder,
  knowledgeDocuments,
  type PreparedTurn,
  planMode,
  workingMemory,
} from '../src/index.js';
import { ManualClock } from '../src/testing.js';

/*
 * The prepared prompt of one fixed conversation, byte for byte, with most prompt features on (facts
 * `all` and `recall`, knowledge documents, a plan, working memory, history replay) and the stores
 * changing between turns. The expected text in `fixtures/prepared-prompt.txt` was recorded from the
 * code before the per-turn caches: any change to what a turn puts in the prompt shows here as a diff.
 */

// Generated ids (sessions, plans, documents) are counted in the prompt's tokens: they are made
// deterministic, a counter in the shape of the real ones.
vi.mock('../src/foundation/ids.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/foundation/ids.js')>();
  let n = 0;
  const next = () => (++n).toString(16).padStart(12, '0');
  return {
    ...real,
    shortId: () => `a${next().slice(1)}`,
    timeOrderedId: () => `01900000-0000-7000-8000-${next()}`,
  };
});

const ann = { userId: 'ann', agentId: 'assistant' };
const MINUTE = 60_000;

/** A message as plain text: role, then the content (tool calls and ids when present). */
function render(message: ChatMessage): string {
  const head = [`### ${message.role}`];
  if (message.name) head.push(`name=${message.name}`);
  if (message.toolCallId) head.push(`toolCallId=${message.toolCallId}`);
  const calls = (message.toolCalls ?? []).map((c) => `call ${c.id} ${c.name} ${c.arguments}`);
  return [head.join(' '), ...calls, message.content].join('\n');
}

function renderTurn(label: string, turn: PreparedTurn, ids: Map<string, string>): string {
  const budget = turn.ledger.entries.map((e) => `${e.middleware}=${e.tokens}/${e.included}`).join(' ');
  let text = [
    `================ ${label} (turn ${turn.turnIndex}, ${turn.ledger.totalTokens} tokens: ${budget})`,
    ...turn.messages.map(render),
  ].join('\n');
  // Generated ids (session, documents, plan) differ per run: they are named by what they are.
  for (const [id, name] of ids) text = text.split(id).join(name);
  return text;
}

async function scriptedConversation(): Promise<string> {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 0));
  const stores = createInMemoryStores({ clock });
  const kioku = new KiokuBuilder({
    stores,
    systemPrompt: 'You are Ann’s travel and work assistant.',
    budget: { maxTokens: 6_000, shares: { facts: 500, knowledge: 1_200 } },
    clock,
  })
    .use(factMemory({ facts: stores.facts }))
    .use(knowledgeDocuments({ store: stores.documents }))
    .use(planMode({ store: stores.plans }))
    .use(factMemory({ mode: 'recall', facts: stores.facts, sessions: stores.sessions }))
    .use(workingMemory({ store: stores.working }))
    .use(conversationHistory({ sessions: stores.sessions, maxTurns: 4 }))
    .build();

  const facts = [
    ['f-diet', 'Diet', 'Ann is vegetarian and avoids mushrooms'],
    ['f-city', 'Home', 'Ann lives in Porto, near the Bolhão market'],
    ['f-work', 'Work', 'Ann is a backend engineer at a logistics company'],
    ['f-kids', undefined, 'Ann has two kids, Rui (9) and Inês (6)'],
    ['f-lang', 'Languages', 'Ann speaks Portuguese, English and some German'],
    ['f-car', undefined, 'Ann drives a 2019 electric hatchback'],
  ] as const;
  for (let i = 0; i < 30; i++) {
    clock.advance(1000);
    await stores.facts.create(ann, {
      id: `f-note-${String(i).padStart(2, '0')}`,
      content: `Trip note ${i}: the ${['museum', 'tram', 'bakery', 'beach', 'castle'][i % 5]} in Lisbon opens at ${8 + (i % 4)} am`,
      category: 'travel',
    });
  }
  for (const [id, title, content] of facts) {
    clock.advance(MINUTE);
    await stores.facts.create(ann, { id, content, ...(title ? { title } : {}), category: 'profile' });
  }
  const handbook = await stores.documents.create(ann, {
    title: 'Team handbook',
    text: 'On-call rotates weekly on Mondays. Incidents go to the #ops channel first.\n\nDeploys freeze on Fridays after 3 pm.',
  });
  const packing = await stores.documents.create(ann, {
    title: 'Packing list',
    text: 'Passports, chargers, sunscreen, the kids’ swimming gear and a rain jacket for Sintra.',
  });

  const convo = await kioku.startConversation(ann);
  const ids = new Map([
    [convo.sessionId, '<session>'],
    [handbook.id, '<doc-handbook>'],
    [packing.id, '<doc-packing>'],
  ]);
  const out: string[] = [];
  const turn = async (label: string, message: string, reply: string, c: Conversation = convo) => {
    clock.advance(MINUTE);
    out.push(renderTurn(label, await c.prepare(message), ids));
    await c.record([
      { role: 'user', content: message },
      { role: 'assistant', content: reply },
    ]);
  };

  await turn('first turn', 'Hi! Can you help me plan our Lisbon trip?', 'Of course. When do you travel?');
  const plan = await stores.plans.create(convo.scope, {
    goal: 'Plan the Lisbon trip in June',
    steps: ['Pick dates', 'Book flights', 'Find an apartment near Alfama'],
  });
  ids.set(plan.id, '<plan>');
  await stores.working.set(convo.scope, `session/${convo.sessionId}/flights`, 'TAP 10:05, easyJet 13:40', {
    ttlMs: 30 * MINUTE,
    category: 'research',
    tags: ['trip'],
  });
  await turn('plan and working memory', 'We fly on June 10. What about the tram?', 'Tram 28 goes to Alfama.');
  // Nothing changes between these two turns but the clock and the transcript.
  await turn('unchanged stores', 'Which museum opens first?', 'The museum opens at 8 am.');
  clock.advance(1000);
  await stores.facts.create(ann, { id: 'f-new', title: 'Allergy', content: 'Inês is allergic to peanuts' });
  await stores.facts.update(ann, 'f-city', { content: 'Ann lives in Braga since March 2026' });
  await stores.facts.delete(ann, 'f-car');
  await stores.plans.updateStep(convo.scope, '1', { status: 'completed', notes: 'June 10–20' });
  await turn(
    'a fact added, edited and forgotten',
    'Any food tips for the kids?',
    'Try the bakery by the castle.',
  );
  await stores.working.delete(convo.scope, `session/${convo.sessionId}/flights`);
  await turn(
    'working memory emptied',
    'Remind me about deploys before I leave.',
    'No deploys on Fridays after 3 pm.',
  );
  await turn('replay window full', 'And the beach day?', 'Cascais is 40 minutes by train.');

  // Another user of the same Kioku: their own facts only, nothing of Ann's.
  await stores.facts.create(
    { userId: 'bo', agentId: 'assistant' },
    { id: 'f-bo', content: 'Bo plays the cello' },
  );
  const bo = await kioku.startConversation({ userId: 'bo', agentId: 'assistant' });
  ids.set(bo.sessionId, '<session-bo>');
  await turn('another user', 'What do I play?', 'The cello.', bo);
  return `${out.join('\n')}\n`;
}

describe('the prepared prompt of a fixed conversation', () => {
  it('is byte-identical to the recorded one, turn after turn, as the stores change', async () => {
    await expect(await scriptedConversation()).toMatchFileSnapshot('fixtures/prepared-prompt.txt');
  });
});
