import { describe, expect, it } from 'vitest';
import {
  type ChatModel,
  conversationHistory,
  type DetailRecord,
  defaultTokenizer,
  KiokuBuilder,
  type LedgerEntry,
  type PreparedTurn,
} from '../../src/index.js';
import type { RefExpansionOptions } from '../../src/memory/offload/expansion.js';
import { EXPANDED_REFS_START } from '../../src/memory/offload/expansion.js';
import { countMessageTokens } from '../../src/model/messages.js';
import { InMemoryDetailStore } from '../../src/store/details/memory.js';
import { InMemorySessionStore } from '../../src/store/sessions/memory.js';
import { bundleWith } from '../bundle.js';
import { scriptedJsonModel } from '../lifecycle/harness.js';
import { expectLedgerAddsUp } from './memory-features.harness.js';

const tok = defaultTokenizer;
const alice = { userId: 'alice' };

/** A build log: 60 ordinary lines, one paragraph about a peer dependency conflict, 60 more lines. */
function buildLog(): string {
  const filler = (from: number) =>
    Array.from(
      { length: 60 },
      (_, i) => `step ${from + i}: compiled module-${from + i}.js in ${20 + i}ms (cache hit)`,
    ).join('\n');
  return [
    filler(0),
    'npm ERR! ERESOLVE could not resolve the peer dependency: react-dom@18.2.0 requires react@^18.2.0 but react@17.0.2 is installed.',
    filler(60),
  ].join('\n\n');
}

function weatherCsv(): string {
  return Array.from(
    { length: 120 },
    (_, i) => `2024-03-${String((i % 28) + 1).padStart(2, '0')},station-${i},rainfall ${i % 7} mm`,
  ).join('\n');
}

async function setup(options: Partial<Omit<RefExpansionOptions, 'details'>> & { share?: number } = {}) {
  const sessions = new InMemorySessionStore();
  const details = new InMemoryDetailStore();
  const { share, ...expansion } = options;
  const kioku = new KiokuBuilder({
    stores: bundleWith({ sessions, details }),
    ...(share === undefined ? {} : { budget: { shares: { 'memory-ref-expansion': share } } }),
  })
    .use(conversationHistory({ sessions }))
    .withMemoryRefExpansion(expansion)
    .build();
  const convo = await kioku.startConversation(alice);
  /** One earlier turn whose tool output was offloaded: the transcript holds only its placeholder. */
  const offloaded = async (cmd: string, content: string): Promise<DetailRecord> => {
    const detail = await details.create(
      { ...alice, threadId: convo.sessionId },
      { description: `run_command output (cmd: ${cmd})`, summary: content.split('\n')[0]!, content },
    );
    const ref = `[MemoryRef: ${detail.id} - ${detail.description} - ${detail.tokenCount} tokens]`;
    await convo.record([
      { role: 'user', content: `run ${cmd}` },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: `c-${detail.id}`, name: 'run_command', arguments: JSON.stringify({ cmd }) }],
      },
      { role: 'tool', toolCallId: `c-${detail.id}`, name: 'run_command', content: `${ref}\nSummary: …` },
      { role: 'assistant', content: 'Done.' },
    ]);
    return detail;
  };
  return { convo, details, offloaded };
}

const entryOf = (turn: PreparedTurn): LedgerEntry | undefined =>
  turn.ledger.entries.find((e) => e.middleware === 'memory-ref-expansion');

describe('memoryRefExpansion', () => {
  it('injects the relevant part of a referenced output, under its placeholder, not the whole output', async () => {
    const { convo, offloaded } = await setup();
    const build = await offloaded('npm run build', buildLog());
    const csv = await offloaded('cat weather.csv', weatherCsv());
    const turn = await convo.prepare('Why did the build fail with the react peer dependency error?');
    const entry = entryOf(turn)!;
    expect(entry.includedIds).toEqual([build.id]);
    expect(entry.dropped).toEqual([{ id: csv.id, reason: 'irrelevant' }]);
    const block = turn.messages.find((m) => m.content.startsWith(EXPANDED_REFS_START))!;
    expect(block.content).toContain(
      `[MemoryRef: ${build.id} - run_command output (cmd: npm run build) - ${build.tokenCount} tokens]`,
    );
    expect(block.content).toContain('react-dom@18.2.0 requires react@^18.2.0');
    expect(block.content).toMatch(/\(part \d+ of \d+, from [\w:]+\)/);
    expect(block.content).toContain('retrieve_memory');
    expect(countMessageTokens(tok, block)).toBeLessThan(build.tokenCount / 2);
    // Memory blocks come before the replayed history that holds the placeholders.
    expect(turn.messages.indexOf(block)).toBeLessThan(turn.messages.findIndex((m) => m.role === 'tool'));
    expectLedgerAddsUp(turn, 16_000);
  });

  it('expands nothing for a message the refs have nothing to do with', async () => {
    const { convo, offloaded } = await setup();
    const build = await offloaded('npm run build', buildLog());
    const turn = await convo.prepare('Write a haiku about green tea.');
    expect(entryOf(turn)).toMatchObject({
      tokens: 0,
      included: 0,
      dropped: [{ id: build.id, reason: 'irrelevant' }],
    });
    expect(turn.messages.some((m) => m.content.startsWith(EXPANDED_REFS_START))).toBe(false);
  });

  it('stays within its budget share: parts that do not fit are dropped as budget', async () => {
    const { convo, offloaded } = await setup({ share: 120, minRelevance: 0, chunkTokens: 40 });
    const build = await offloaded('npm run build', buildLog());
    const turn = await convo.prepare('Which modules were compiled with a cache hit in the build?');
    const entry = entryOf(turn)!;
    expect(entry.tokens).toBeLessThanOrEqual(120);
    expect(entry.allottedTokens).toBe(120);
    expect(entry.includedIds).toEqual([build.id]);
    expect(entry.dropped.some((d) => d.id.startsWith(`${build.id}#`) && d.reason === 'budget')).toBe(true);
    // With no room for one part the ref itself is dropped as budget.
    const { convo: tiny, offloaded: offloadTiny } = await setup({
      share: 40,
      minRelevance: 0,
      chunkTokens: 40,
    });
    const other = await offloadTiny('npm run build', buildLog());
    const squeezed = await tiny.prepare('Which modules were compiled with a cache hit in the build?');
    expect(entryOf(squeezed)).toMatchObject({ tokens: 0, dropped: [{ id: other.id, reason: 'budget' }] });
  });

  it('drops refs past maxRefs (oldest first) and refs whose output is gone', async () => {
    const { convo, details, offloaded } = await setup({ maxRefs: 1 });
    const first = await offloaded('npm run build', buildLog());
    const second = await offloaded('npm run build again', buildLog());
    const turn = await convo.prepare('What was the react peer dependency error in the build?');
    expect(entryOf(turn)).toMatchObject({
      includedIds: [second.id],
      dropped: [{ id: first.id, reason: 'limit' }],
    });
    await details.deactivate(alice, second.id);
    const after = await convo.prepare('What was the react peer dependency error in the build?');
    expect(entryOf(after)!.dropped).toEqual([
      { id: first.id, reason: 'limit' },
      { id: second.id, reason: 'expired' },
    ]);
  });

  it("expands nothing with recall: 'never'", async () => {
    const { convo, offloaded } = await setup();
    const build = await offloaded('npm run build', buildLog());
    const turn = await convo.prepare('What was the react peer dependency error?', { recall: 'never' });
    expect(entryOf(turn)).toMatchObject({ tokens: 0, dropped: [{ id: build.id, reason: 'not-needed' }] });
  });

  it('lets a model choose the refs; the parts are still chosen lexically', async () => {
    const model = scriptedJsonModel([
      (messages: { content: string }[]) => {
        const ids = [
          ...messages
            .map((m) => m.content)
            .join('\n')
            .matchAll(/\[MemoryRef: (\S+) - [^\]]*cat weather/g),
        ];
        return { expand: [ids[0]![1], 'invented-id'] };
      },
    ]);
    const { convo, offloaded } = await setup({ model });
    const build = await offloaded('npm run build', buildLog());
    const csv = await offloaded('cat weather.csv', weatherCsv());
    const turn = await convo.prepare('How much rain fell at station-7?');
    const entry = entryOf(turn)!;
    expect(entry.includedIds).toEqual([csv.id]);
    // The build log is not chosen; of the table, the parts that did not fit are dropped one by one.
    expect(entry.dropped.filter((d) => !d.id.includes('#'))).toEqual([
      { id: build.id, reason: 'irrelevant' },
    ]);
    expect(entry.tokens).toBeLessThanOrEqual(entry.allottedTokens);
    expect(turn.messages.find((m) => m.content.startsWith(EXPANDED_REFS_START))!.content).toContain(
      'station-7,',
    );
    expect(entry.notes).toBeUndefined();
  });

  it('falls back to the lexical choice when the model answers malformed JSON or fails, and notes it', async () => {
    const malformed = scriptedJsonModel(['{"expand": ', 'still not json']);
    const { convo, offloaded } = await setup({ model: malformed });
    const build = await offloaded('npm run build', buildLog());
    const turn = await convo.prepare('Why did the build fail with the react peer dependency error?');
    expect(entryOf(turn)).toMatchObject({ includedIds: [build.id] });
    expect(entryOf(turn)!.notes![0]).toMatch(
      /^model chooser failed \(MODEL_OUTPUT: .*\); parts chosen lexically$/,
    );

    const hanging: ChatModel = { complete: () => new Promise(() => {}) };
    const slow = await setup({ model: hanging, timeoutMs: 20 });
    await slow.offloaded('npm run build', buildLog());
    const late = await slow.convo.prepare('Why did the build fail with the react peer dependency error?');
    expect(entryOf(late)!.notes![0]).toMatch(/^model chooser failed \(TIMEOUT: /);
    expect(entryOf(late)!.included).toBe(1);
  });
});
