/**
 * What the store bench writes and asks (`--corpus short | long`):
 * - short (default): one-sentence facts (LoCoMo's observations, people renamed; `src/facts.ts`) and a fixed
 *   list of 30 questions;
 * - long: paragraph-long memories, 50–300 words each, made of consecutive turns of one LoCoMo session stitched
 *   together (`Speaker: text` per turn), the vocabulary of real dialogue; asked LoCoMo's own questions.
 *   The sessions hold fewer words than a large store needs, so the corpus walks them again and again, each
 *   pass cutting the paragraphs at other places (seeded lengths in words; a paragraph starts with a turn and
 *   may end inside one): different texts made of the same turns.
 */
import { existsSync } from 'node:fs';
import { type FactSeed, factSeeds, QUERIES } from './facts.js';
import { loadLocomo, locomoPath } from './locomo.js';
import { seededRandom } from './util.js';

export type CorpusName = 'short' | 'long';
export const CORPORA: readonly CorpusName[] = ['short', 'long'];

export interface Corpus {
  name: CorpusName;
  /** `count` records to write, deterministic. */
  seeds(count: number): FactSeed[];
  /** What the timed searches cycle through. */
  queries: readonly string[];
}

const MIN_WORDS = 50;
const MAX_WORDS = 300;
/** LoCoMo questions the long corpus's searches cycle through (a seeded sample of the 1,986). */
const LONG_QUERIES = 400;

const CATEGORIES = ['conversation', 'events', 'family', 'hobbies', 'work/projects', 'travel'];

export function corpus(name: CorpusName): Corpus {
  if (name === 'short') return { name, seeds: factSeeds, queries: QUERIES };
  if (!existsSync(locomoPath()))
    throw new Error(
      `--corpus long is built from LoCoMo, not found at ${locomoPath()} (see KIOKU_BENCH_DATA)`,
    );
  const conversations = loadLocomo();
  // Each session's turns as `Speaker: text`, the unit text's `X said, "…"` undone.
  const sessions: string[][] = [];
  for (const conversation of conversations) {
    const bySession = new Map<string, string[]>();
    for (const unit of conversation.units) {
      const session = unit.id.slice(0, unit.id.indexOf(':'));
      const m = /^(.*?) said, "(.*)"( and shared .*)?$/s.exec(unit.text);
      const turn = m ? `${m[1]}: ${m[2]}${m[3] ? ` (${m[3].trim()})` : ''}` : unit.text;
      const turns = bySession.get(session);
      if (turns) turns.push(turn);
      else bySession.set(session, [turn]);
    }
    sessions.push(...bySession.values());
  }
  const random = seededRandom(17);
  const questions = conversations.flatMap((c) => c.questions.map((q) => q.question));
  const queries = Array.from(
    { length: LONG_QUERIES },
    () => questions[Math.floor(random() * questions.length)]!,
  );
  return { name, seeds: (count) => paragraphs(sessions, count), queries };
}

/** `count` paragraphs of 50–300 words, each from consecutive turns of one session. */
function paragraphs(sessions: readonly string[][], count: number): FactSeed[] {
  const random = seededRandom(29);
  const out: FactSeed[] = [];
  for (let pass = 0; out.length < count; pass++) {
    for (const turns of sessions) {
      // Each pass starts a session's first paragraph a little further in.
      let i = pass % Math.max(1, Math.min(turns.length, 7));
      while (i < turns.length && out.length < count) {
        const target = MIN_WORDS + Math.floor(random() * (MAX_WORDS - MIN_WORDS + 1));
        const words: string[] = [];
        while (i < turns.length && words.length < target) words.push(...turns[i++]!.split(/\s+/));
        if (words.length < MIN_WORDS) break; // a session's short tail
        const n = out.length;
        out.push({
          content: words.slice(0, target).join(' '),
          category: CATEGORIES[n % CATEGORIES.length]!,
          tags: n % 3 === 0 ? ['conversation', 'recent'] : ['conversation'],
        });
      }
    }
  }
  return out;
}
