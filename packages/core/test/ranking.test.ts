import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BM25,
  DEFAULT_FEEDBACK,
  englishAnalyzer,
  expandQuery,
  type FeedbackParams,
  feedbackTerms,
  LexicalIndex,
  type RankCandidate,
  scoreCandidates,
  termCounts,
  termsByRarity,
} from '../src/adapter.js';
import type { Bm25Params } from '../src/search/ranking.js';
import { seededRandom } from './seeded-random.js';

const WORDS = 'apple banana cherry dog eagle fish grape house island jungle kite lemon mango'.split(' ');

/** Texts of 1 to 12 words, some repeated within a text, some texts identical (ties). */
function corpus(seed: number, size: number): string[] {
  const random = seededRandom(seed);
  const texts = Array.from({ length: size }, () =>
    Array.from(
      { length: 1 + Math.floor(random() * 12) },
      () => WORDS[Math.floor(random() * WORDS.length)]!,
    ).join(' '),
  );
  texts.push(texts[3]!, texts[7]!);
  return texts;
}

const QUERIES = [
  'apple',
  'banana cherry',
  'dog dog eagle',
  'fish grape house island',
  'kite lemon mango apple',
];

interface Store {
  pool: RankCandidate[];
  stats: { rows: number; terms: number };
  df: (term: string) => number;
}

/** What a SQL store keeps of the texts: analysed terms joined by spaces, their lengths, document frequencies. */
function store(texts: readonly string[]): Store {
  const dfs = new Map<string, number>();
  let terms = 0;
  const pool = texts.map((text, seq) => {
    const analysed = englishAnalyzer.terms(text);
    const tf = termCounts(analysed.join(' '));
    for (const term of tf.keys()) dfs.set(term, (dfs.get(term) ?? 0) + 1);
    terms += analysed.length;
    return { seq, tf, length: analysed.length };
  });
  return { pool, stats: { rows: texts.length, terms }, df: (term) => dfs.get(term) ?? 0 };
}

/** A store's search as store-sqlite and store-postgres run it: score, expand, score again. */
function rankedByStore(
  s: Store,
  query: string,
  limit: number,
  bm25: Bm25Params = DEFAULT_BM25,
  feedback: FeedbackParams | false = DEFAULT_FEEDBACK,
) {
  const weights = new Map<string, number>();
  for (const term of englishAnalyzer.terms(query)) weights.set(term, (weights.get(term) ?? 0) + 1);
  const original = new Set(weights.keys());
  let ranked = scoreCandidates(s.pool, weights, original, s.stats, s.df, bm25);
  const expanded =
    feedback &&
    expandQuery(ranked.slice(0, Math.max(limit, feedback.docs)), weights, s.stats.rows, s.df, feedback);
  if (expanded) ranked = scoreCandidates(s.pool, expanded, original, s.stats, s.df, bm25);
  return { hits: ranked.slice(0, limit).map((r) => ({ id: `t${r.seq}`, score: r.score })), expanded };
}

function index(texts: readonly string[], options: ConstructorParameters<typeof LexicalIndex>[0]) {
  const lexical = new LexicalIndex(options);
  for (const [i, text] of texts.entries()) lexical.set(`t${i}`, text);
  return lexical;
}

describe('termCounts', () => {
  it('counts each term of a space-joined analysis, in order of first occurrence', () => {
    expect([...termCounts('kite lemon kite apple lemon kite')]).toEqual([
      ['kite', 3],
      ['lemon', 2],
      ['apple', 1],
    ]);
    expect(termCounts('').size).toBe(0);
  });

  it('looks up a term in the text as the map would count it: whole terms only, before and after the map is built', () => {
    const texts = ['kite lemon kite apple lemon kite', 'kites kite skite kite', 'a', 'aa a aaa a', ''];
    const probes = [
      'kite',
      'kites',
      'ite',
      'lemon',
      'apple',
      'a',
      'aa',
      'aaa',
      'pear',
      'e k',
      'lemon kite',
      '',
    ];
    for (const text of texts) {
      const expected = new Map<string, number>();
      if (text) for (const term of text.split(' ')) expected.set(term, (expected.get(term) ?? 0) + 1);
      const counts = termCounts(text);
      // Many look-ups: the first ones scan the text, the later ones read the map it builds.
      for (let round = 0; round < 6; round++) {
        for (const term of probes) {
          expect(counts.get(term), `${term} in "${text}"`).toBe(expected.get(term));
          expect(counts.has(term)).toBe(expected.has(term));
        }
      }
      expect([...counts]).toEqual([...expected]);
    }
  });
});

describe('candidate ranking equals LexicalIndex to the last bit', () => {
  const texts = corpus(7, 120);
  const s = store(texts);

  it('first round alone (no feedback): the same ids in the same order, the same scores', () => {
    const core = index(texts, { feedback: false });
    for (const query of QUERIES) {
      const ours = rankedByStore(s, query, texts.length, DEFAULT_BM25, false).hits;
      expect(ours.length).toBeGreaterThan(0);
      expect(ours).toEqual(core.search(query));
    }
  });

  it('both rounds (feedback on): the same ids, order and scores, and feedback changes the ranking', () => {
    const core = index(texts, {});
    const firstRound = index(texts, { feedback: false });
    let changed = 0;
    for (const query of QUERIES) {
      for (const limit of [5, 10, texts.length]) {
        const ours = rankedByStore(s, query, limit);
        expect(ours.expanded).toBeDefined();
        expect(ours.hits).toEqual(core.search(query, { limit }));
        if (JSON.stringify(ours.hits) !== JSON.stringify(firstRound.search(query, { limit }))) changed += 1;
      }
    }
    expect(changed).toBeGreaterThan(0);
  });

  it('with other parameters too', () => {
    const bm25 = { k1: 0.9, b: 0.75, d: 0.5 };
    const feedback = { docs: 3, terms: 4, queryWeight: 0.5 };
    const core = index(texts, { bm25, feedback });
    for (const query of QUERIES) {
      expect(rankedByStore(s, query, 20, bm25, feedback).hits).toEqual(core.search(query, { limit: 20 }));
    }
  });

  it('ties go to the lower seq, as LexicalIndex gives them to the text indexed first', () => {
    const hits = rankedByStore(s, texts[3]!, texts.length).hits;
    const at = (id: string) => hits.findIndex((h) => h.id === id);
    const twin = `t${texts.length - 2}`;
    expect(hits[at('t3')]!.score).toBe(hits[at(twin)]!.score);
    expect(at('t3')).toBeLessThan(at(twin));
  });
});

describe('scoreCandidates', () => {
  it('returns the candidates themselves, their own fields kept, with the score written on them', () => {
    const pool = ['kite lemon', 'lemon', 'mango'].map((text, seq) => ({
      seq,
      id: `row-${seq}`,
      tf: termCounts(englishAnalyzer.terms(text).join(' ')),
      length: englishAnalyzer.terms(text).length,
    }));
    const ranked = scoreCandidates(
      pool,
      new Map([['lemon', 1]]),
      new Set(['lemon']),
      { rows: 3, terms: 4 },
      () => 2,
    );
    expect(ranked.map((r) => r.id)).toEqual(['row-1', 'row-0']);
    expect(ranked[0]).toBe(pool[1]);
    expect(pool[1]).toHaveProperty('score', ranked[0]!.score);
    expect(pool[2]).not.toHaveProperty('score');
  });
});

describe('feedback terms', () => {
  it('are the terms of the best results the query lacks, and every term expandQuery adds is one', () => {
    const s = store(corpus(11, 60));
    const weights = new Map([['banana', 1]]);
    const ranked = scoreCandidates(s.pool, weights, new Set(weights.keys()), s.stats, s.df);
    const terms = feedbackTerms(ranked, weights);
    const expected = new Set(ranked.slice(0, DEFAULT_FEEDBACK.docs).flatMap((r) => [...r.tf.keys()]));
    expected.delete('banana');
    expect(new Set(terms)).toEqual(expected);
    const expanded = expandQuery(ranked, weights, s.stats.rows, s.df)!;
    expect(expanded.get('banana')).toBe(DEFAULT_FEEDBACK.queryWeight);
    const added = [...expanded.keys()].filter((term) => term !== 'banana');
    expect(added.length).toBe(Math.min(DEFAULT_FEEDBACK.terms, terms.length));
    for (const term of added) expect(terms).toContain(term);
    expect(Math.max(...added.map((term) => expanded.get(term)!))).toBe(1 - DEFAULT_FEEDBACK.queryWeight);
  });

  it('none when feedback is off, nothing ranked, or the best results hold only query terms', () => {
    const s = store(['apple apple', 'apple', 'banana']);
    const weights = new Map([['appl', 1]]);
    const ranked = scoreCandidates(s.pool, weights, new Set(weights.keys()), s.stats, s.df);
    expect(ranked.map((r) => r.seq)).toEqual([0, 1]);
    expect(feedbackTerms(ranked, weights)).toEqual([]);
    expect(expandQuery(ranked, weights, 3, s.df)).toBeUndefined();
    expect(expandQuery([], weights, 3, s.df)).toBeUndefined();
    expect(expandQuery(ranked, weights, 3, s.df, { ...DEFAULT_FEEDBACK, docs: 0 })).toBeUndefined();
  });
});

describe('termsByRarity', () => {
  const dfs = new Map([
    ['zebra', 3],
    ['kite', 40],
    ['apple', 40],
    ['house', 900],
    ['gone', 0],
  ]);
  const df = (term: string) => dfs.get(term) ?? 0;
  const budget = { match: 50, feedback: 10 };

  it('keeps the terms the partition holds, rarest first (ties by code unit), rare ones within the budget', () => {
    const weights = new Map([
      ['house', 1],
      ['kite', 1],
      ['gone', 1],
      ['apple', 1],
      ['zebra', 1],
    ]);
    expect(termsByRarity(weights, new Set(weights.keys()), df, budget)).toEqual({
      feedback: false,
      present: ['zebra', 'apple', 'kite', 'house'],
      postings: 983,
      rare: ['zebra', 'apple'],
      common: ['kite', 'house'],
      anchor: ['zebra', 'apple'],
    });
  });

  it('a feedback round weighs only its new terms, within the feedback budget; no rare term anchors on the rarest', () => {
    const weights = new Map([
      ['zebra', 0.5],
      ['kite', 0.2],
      ['house', 0.1],
    ]);
    expect(termsByRarity(weights, new Set(['zebra']), df, budget)).toEqual({
      feedback: true,
      present: ['kite', 'house'],
      postings: 940,
      rare: [],
      common: ['kite', 'house'],
      anchor: ['kite'],
    });
  });

  it('is undefined when the partition holds none of the terms', () => {
    const weights = new Map([['gone', 1]]);
    expect(termsByRarity(weights, new Set(weights.keys()), df, budget)).toBeUndefined();
  });
});
