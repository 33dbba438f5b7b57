import { describe, expect, it } from 'vitest';
import { FACT_BLOCK_FRAME, renderFactBlock } from '../src/memory/facts/all/format.js';
import { RECALL_FRAME, renderRecall } from '../src/memory/facts/recall/format.js';
import { MEMORIES_FRAME, renderMemories } from '../src/memory/facts/relevant/format.js';
import { countMessageTokens } from '../src/model/messages.js';
import { LineFitter, type LineItem } from '../src/runtime/fit-lines.js';
import {
  defaultTokenizer,
  memoizedTokenizer,
  o200kTokenizer,
  type Tokenizer,
} from '../src/tokens/tokenizer.js';
import { seededRandom } from './seeded-random.js';

const PIECES = [
  '- (user) ',
  'Likes tea.',
  ' 東京',
  ' 🙂',
  'über',
  ' 12,345',
  '  ',
  '\n',
  '/x',
  ':',
  ' the',
  'ing',
  '\t',
  '.',
];

function fit(
  tokenizer: Tokenizer,
  items: readonly LineItem[],
  limit: number,
  frame?: typeof FACT_BLOCK_FRAME,
) {
  const fitter = new LineFitter(tokenizer, limit, renderFactBlock, frame);
  for (const item of items) {
    if (fitter.full) break;
    fitter.offer(item);
  }
  return fitter.finish();
}

describe('LineFitter', () => {
  it('each block frame is how its renderer renders (fact block, recall, relevant memories)', () => {
    const blocks = [
      [renderFactBlock, FACT_BLOCK_FRAME],
      [renderRecall, RECALL_FRAME],
      [renderMemories, MEMORIES_FRAME],
    ] as const;
    for (const [render, frame] of blocks) {
      for (const lines of [[], ['- a'], ['- a', '- b: c', '- d\n  e']]) {
        expect(render(lines)).toBe(frame.head + lines.map((l) => `${l}\n`).join('') + frame.tail);
      }
    }
  });

  it('fits the same lines with the frame (counted line by line) as without it, for any line and budget', () => {
    const random = seededRandom(9);
    const line = () => {
      let text = random() < 0.8 ? '- ' : PIECES[Math.floor(random() * PIECES.length)]!;
      const n = 1 + Math.floor(random() * 12);
      for (let i = 0; i < n; i++) text += PIECES[Math.floor(random() * PIECES.length)];
      return text;
    };
    const tokenizers = [o200kTokenizer, defaultTokenizer, memoizedTokenizer(o200kTokenizer, { minChars: 4 })];
    for (let round = 0; round < 150; round++) {
      const items: LineItem[] = Array.from({ length: 1 + Math.floor(random() * 40) }, (_, i) => ({
        id: `f${i}`,
        line: line(),
      }));
      const limit = 10 + Math.floor(random() * 300);
      for (const tokenizer of tokenizers) {
        const plain = fit(tokenizer, items, limit);
        const framed = fit(tokenizer, items, limit, FACT_BLOCK_FRAME);
        expect(framed).toEqual(plain);
        // The count the fitter hands the runner with the message is the message's count.
        for (const block of [plain, framed]) {
          if (!block.message) continue;
          const fresh = { role: 'system' as const, content: block.message.content };
          expect(countMessageTokens(tokenizer, block.message)).toBe(
            countMessageTokens(o200kTokenizer, fresh),
          );
        }
      }
    }
  });
});
