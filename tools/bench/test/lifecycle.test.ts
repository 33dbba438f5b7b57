import { OpenAIChatModel } from '@kioku/openai';
import { type Reply, startScriptedServer, text } from '@kioku/openai-test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { runLifecycleBench } from '../src/lifecycle.js';
import { runCostBench } from '../src/lifecycle-cost.js';
import { type Conversation, TURN_MS, type Unit } from '../src/locomo.js';

/** A session's dialog turns as LoCoMo units (`D<session>:<n>`), half a minute apart from its date. */
function turns(session: number, date: number, texts: string[]): Unit[] {
  return texts.map((text, turn) => ({
    id: `D${session}:${turn + 1}`,
    session,
    turn,
    time: date + (turn + 1) * TURN_MS,
    text,
  }));
}

/** A LoCoMo-shaped conversation of six turns in two sessions, with two questions. */
const CONVERSATION: Conversation = {
  sampleId: 'conv-test',
  units: [
    ...turns(1, Date.UTC(2023, 4, 8, 13, 56), [
      'Caroline said, "I moved to Lisbon last spring."',
      'Melanie said, "How do you like it there?"',
      'Caroline said, "I adopted a dog named Pixel."',
    ]),
    ...turns(2, Date.UTC(2023, 4, 9, 15, 0), [
      'Caroline said, "Pixel loves the beach."',
      'Melanie said, "I started pottery classes."',
      'Caroline said, "I live in Lisbon, by the way."',
    ]),
  ],
  sessionDates: { 1: '1:56 pm on 8 May, 2023', 2: '3:00 pm on 9 May, 2023' },
  questions: [
    { question: 'Where does Caroline live?', category: 4, evidence: ['D1:1'] },
    { question: 'What is the name of Caroline’s dog?', category: 4, evidence: ['D1:3'] },
  ],
  observations: [],
};

/**
 * Extraction turns each Caroline turn into one fact (reconciliation adds each), and the dream merges the
 * two Lisbon facts.
 */
const route: Reply = (res, body, req) => {
  const name = (body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name;
  const messages = body.messages as { role: string; content: string }[];
  const prompt = messages.at(-1)!.content;
  let answer: unknown = {};
  if (name === 'memory_extraction_batch') {
    const facts = [...prompt.matchAll(/<exchange turn="(\d+)">\n<user>\nCaroline said, "([^"]+)"/g)].map(
      (m) => ({
        turn: Number(m[1]),
        content: `Caroline: ${m[2]}`,
        category: 'people/caroline',
      }),
    );
    answer = { facts };
  } else if (name === 'memory_extraction') {
    const said = /Caroline said, "([^"]+)"/.exec(prompt)?.[1];
    answer = said
      ? { facts: [{ content: `Caroline: ${said}`, category: 'people/caroline' }] }
      : { facts: [] };
  } else if (name === 'memory_reconciliation') {
    // Every new fact is new information here.
    answer = { decisions: [{ fact: 1, event: 'ADD', reason: 'not known yet' }] };
  } else if (name === 'memory_consolidation') {
    const lisbon = [...prompt.matchAll(/^\d+\. \[([^\]]+)\][^\n]*Lisbon/gm)].map((m) => m[1]);
    answer = {
      merges: [
        {
          sourceIds: lisbon,
          content: 'Caroline lives in Lisbon (moved last spring)',
          category: 'people/caroline',
          tags: ['lisbon'],
        },
      ],
    };
  }
  text(JSON.stringify(answer), { usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } })(
    res,
    body,
    req,
  );
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

describe('bench:lifecycle plumbing (scripted OpenAI-compatible server)', () => {
  it('extracts, dreams and scores evidence through the facts and their merges', async () => {
    const server = await startScriptedServer(route);
    closers.push(server.close);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'scripted' });
    const result = await runLifecycleBench({
      model,
      modelName: 'scripted',
      conversations: [CONVERSATION],
      budget: 2000,
    });
    expect(result.dialogTurns).toBe(6);
    expect(result.questions).toBe(2);
    // Four Caroline turns → four facts; the dream folds the two about Lisbon into one.
    expect(result.factsAfterExtraction).toBe(4);
    expect(result.factsAfterDream).toBe(3);
    expect(result.duplicatesFound.merged).toBe(1);
    expect(result.extraction.operations.create).toBe(4);
    expect(result.dream.operations).toEqual({ create: 1, update: 0, delete: 2 });
    // Usage is counted from the endpoint's figures (six extraction calls, at least one dream call).
    expect(result.extraction.inputTokens).toBeGreaterThanOrEqual(600);
    expect(result.dream.inputTokens).toBeGreaterThanOrEqual(100);
    // Both questions find their evidence: the merged fact stands for D1:1 (and D2:3), the dog fact for D1:3.
    expect(result.evidencePct.extracted).toBe(100);
    expect(result.evidencePct.rawTurns).toBe(100);
  });

  it("extracts in batches of a session's turns: the same facts, each naming its turn, in fewer calls", async () => {
    const server = await startScriptedServer(route);
    closers.push(server.close);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'scripted' });
    const result = await runLifecycleBench({
      model,
      modelName: 'scripted',
      conversations: [CONVERSATION],
      budget: 2000,
      batch: 3,
    });
    expect(result.batch).toBe(3);
    expect(result.factsAfterExtraction).toBe(4);
    // One call per session (two sessions of three turns), 100 reported prompt tokens each.
    expect(result.extraction.inputTokens).toBe(200);
    expect(result.evidencePct.extracted).toBe(100);
  });
});

describe('bench:lifecycle cost (scripted extractor)', () => {
  it('reports calls, tokens and facts per user turn for the per-turn path and each batch size', async () => {
    const conversation: Conversation = {
      ...CONVERSATION,
      units: CONVERSATION.units.map((u) => ({
        ...u,
        text: u.text.replace('."', ' with my family and friends."'),
      })),
    };
    const rows = await runCostBench({ conversations: [conversation], batches: [3], triggers: [2] });
    expect(rows.map((r) => r.path)).toEqual([
      'per turn',
      'batch 3',
      'outbox, in-process defaults',
      'outbox, trigger 2',
    ]);
    const [perTurn, batched, outbox, trigger2] = rows;
    expect(perTurn!.userTurns).toBe(6);
    // One extraction call per turn, and reconciliation once
    // the user has similar facts; batched, one call per session.
    expect(perTurn!.calls).toBeGreaterThan(6);
    expect(batched!.calls).toBe(2);
    expect(batched!.callsPerTurn).toBe(0.333);
    expect(batched!.facts).toBe(perTurn!.facts);
    expect(perTurn!.facts).toBe(5); // the one question proposes nothing
    expect(batched!.promptVsPerTurn).toBeLessThan(0.5);
    // Through a Kioku conversation with withExtraction(): a session shorter than the trigger is one
    // pass when it ends; with a trigger of 2 turns, a session of 3 is a pass of 2, then one of 1.
    expect(outbox).toMatchObject({ userTurns: 6, calls: 2, failures: 0, facts: perTurn!.facts });
    expect(trigger2).toMatchObject({ userTurns: 6, calls: 4, failures: 0, facts: perTurn!.facts });
  });
});
