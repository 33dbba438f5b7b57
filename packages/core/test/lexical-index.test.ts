import { describe, expect, it } from 'vitest';
import { englishAnalyzer, LexicalIndex } from '../src/adapter.js';
import { seededRandom } from './seeded-random.js';

const WORDS = 'apple banana cherry dog eagle fish grape house island jungle kite lemon mango'.split(' ');

describe('englishAnalyzer', () => {
  it('drops the Snowball stop words, question words included', () => {
    expect(englishAnalyzer.terms('When does she do it, and why?')).toEqual([]);
  });

  it('maps irregular verb forms to their base before stemming', () => {
    expect(englishAnalyzer.terms('bought')).toEqual(englishAnalyzer.terms('buy'));
    expect(englishAnalyzer.terms('went')).toEqual(englishAnalyzer.terms('go'));
    expect(englishAnalyzer.terms('met')).toEqual(englishAnalyzer.terms('meeting'));
  });
});

describe('LexicalIndex ranking', () => {
  it('finds a past-tense memory from a present-tense question', () => {
    const index = new LexicalIndex();
    index.set('bike', 'Alice bought a red bike last week');
    index.set('trip', 'Bob went to Paris in May');
    index.set('pet', 'Alice has a cat named Luna');
    expect(index.search('What did Alice buy?')[0]?.id).toBe('bike');
    expect(index.search('Where did Bob go?')[0]?.id).toBe('trip');
  });

  it('ranks texts matching more distinct query terms first', () => {
    const index = new LexicalIndex({ feedback: false });
    index.set('one', 'piano piano piano piano lessons');
    index.set('two', 'piano concert tickets');
    expect(index.search('piano concert')[0]?.id).toBe('two');
  });

  it('feedback can bring in a text that shares no query term', () => {
    const index = new LexicalIndex({ feedback: { docs: 1, terms: 5, queryWeight: 0.5 } });
    index.set('a', 'marathon training plan with interval runs');
    index.set('b', 'interval runs on the track every tuesday');
    for (let i = 0; i < 20; i++) index.set(`noise${i}`, `unrelated note number ${i} about groceries`);
    const withFeedback = index.search('marathon').map((h) => h.id);
    expect(withFeedback[0]).toBe('a');
    expect(withFeedback).toContain('b');
    const plain = new LexicalIndex({ feedback: false });
    plain.set('a', 'marathon training plan with interval runs');
    plain.set('b', 'interval runs on the track every tuesday');
    expect(plain.search('marathon').map((h) => h.id)).toEqual(['a']);
  });

  it('applies the filter before the limit, also with feedback', () => {
    const index = new LexicalIndex();
    for (let i = 0; i < 30; i++) index.set(`d${i}`, `dog walk number ${i}`);
    const hits = index.search('dog walk', { limit: 3, filter: (id) => id.endsWith('7') });
    expect(hits.map((h) => h.id).sort()).toEqual(['d17', 'd27', 'd7']);
  });
});

describe('LexicalIndex incremental updates', () => {
  // Without feedback, scores do not depend on history. (With feedback, ties among the top results may
  // be broken differently, so the expansion may differ; that variant only checks size and clean-up.)
  it('scores after any sequence of set/remove exactly as an index built from the final texts', () => {
    const next = seededRandom(42);
    const text = () =>
      Array.from({ length: 1 + Math.floor(next() * 8) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(
        ' ',
      );
    for (const feedback of [false, undefined] as const) {
      const index = new LexicalIndex({ feedback });
      const live = new Map<string, string>();
      for (let op = 0; op < 3000; op++) {
        const id = `d${Math.floor(next() * 200)}`;
        if (next() < 0.3) {
          index.remove(id);
          live.delete(id);
        } else {
          const t = text();
          index.set(id, t);
          live.set(id, t);
        }
        expect(index.size).toBe(live.size);
        if (feedback === false && op % 100 === 0) {
          const fresh = new LexicalIndex({ feedback });
          for (const [id2, t] of live) fresh.set(id2, t);
          const query = text();
          const scores = (ix: LexicalIndex) =>
            ix
              .search(query)
              .map((h) => `${h.id}:${h.score.toFixed(9)}`)
              .sort();
          expect(scores(index)).toEqual(scores(fresh));
        } else if (op % 100 === 0) {
          expect(index.search(text()).length).toBeLessThanOrEqual(live.size);
        }
      }
      for (const id of [...live.keys()]) index.remove(id);
      expect(index.size).toBe(0);
      expect(index.search('apple')).toEqual([]);
    }
  });
});

describe('LexicalIndex state', () => {
  const texts = [
    ['bike', 'Alice bought a red bike last week'],
    ['trip', 'Bob went to Paris in May'],
    ['pet', 'Alice has a cat named Luna'],
    ['gone', 'A text removed before the export'],
  ] as const;

  it('a restored index ranks exactly as the one exported, through JSON, and takes further writes', () => {
    const index = new LexicalIndex();
    for (const [id, t] of texts) index.set(id, t);
    index.remove('gone');
    const restored = LexicalIndex.fromState(JSON.parse(JSON.stringify(index.exportState())));
    expect(restored.size).toBe(3);
    expect(restored.has('gone')).toBe(false);
    for (const q of ['What did Alice buy?', 'Paris trip', 'cat', 'Alice']) {
      expect(restored.search(q)).toEqual(index.search(q));
    }
    restored.set('pet', 'Alice has a dog named Rex');
    restored.set('car', 'Bob bought a car');
    expect(restored.search('dog')[0]?.id).toBe('pet');
    expect(restored.search('cat')).toEqual([]);
    expect(
      restored
        .search('bought')
        .slice(0, 2)
        .map((h) => h.id)
        .sort(),
    ).toEqual(['bike', 'car']);
  });

  it('a restored index exports, removes and refills exactly as one that was never exported', () => {
    const built = new LexicalIndex();
    for (const [id, t] of texts) built.set(id, t);
    const restored = LexicalIndex.fromState(built.exportState());
    expect(restored.exportState()).toEqual(built.exportState());
    for (const index of [built, restored]) {
      index.search('Alice'); // the feedback round reads the top texts' terms
      index.remove('trip');
      index.set('car', 'Bob bought a car');
    }
    expect(restored.exportState()).toEqual(built.exportState());
    for (const q of ['Alice', 'car', 'Paris', 'removed export'])
      expect(restored.search(q)).toEqual(built.search(q));
    for (const index of [built, restored]) for (const id of ['bike', 'pet', 'gone', 'car']) index.remove(id);
    expect(restored.size).toBe(0);
    expect(restored.exportState()).toEqual(built.exportState());
    restored.set('new', 'Alice again');
    expect(restored.search('Alice')).toEqual([{ id: 'new', score: expect.any(Number) }]);
  });

  it('setTerms on a restored index (pre-analysed terms) ranks and exports exactly as set', () => {
    const built = new LexicalIndex();
    for (const [id, t] of texts) built.set(id, t);
    const restored = LexicalIndex.fromState(built.exportState());
    for (const [id, t] of [
      ['car', 'Bob bought a car, a red car'],
      ['new', 'Alice went to Paris again'],
    ] as const) {
      built.set(id, t);
      restored.setTerms(id, englishAnalyzer.terms(t));
    }
    expect(restored.exportState()).toEqual(built.exportState());
    for (const q of ['Alice', 'car', 'Paris', 'red car']) expect(restored.search(q)).toEqual(built.search(q));
  });
  it('takes the texts as a Uint32Array too', () => {
    const index = new LexicalIndex();
    for (const [id, t] of texts) index.set(id, t);
    const state = index.exportState();
    const packed = { ...state, ids: [...state.ids], docs: Uint32Array.from(state.docs) };
    const restored = LexicalIndex.fromState(packed);
    // The index keeps copies: changing the state afterwards changes nothing.
    packed.docs.fill(0);
    packed.ids.fill('x');
    for (const q of ['What did Alice buy?', 'Paris trip', 'cat'])
      expect(restored.search(q)).toEqual(index.search(q));
    expect(restored.exportState()).toEqual(state);
    const truncated = { ...state, docs: Uint32Array.from(state.docs.slice(0, -1)) };
    expect(() => LexicalIndex.fromState(truncated)).toThrow(
      expect.objectContaining({ code: 'CORRUPT_DATA' }),
    );
    expect(() => LexicalIndex.fromState({ ...state, docs: Float64Array.from(state.docs) })).toThrow(
      expect.objectContaining({ code: 'CORRUPT_DATA' }),
    );
  });

  it('refuses state of another shape with a CorruptDataError', () => {
    const good = (() => {
      const index = new LexicalIndex();
      index.set('a', 'apple banana');
      return index.exportState();
    })();
    for (const bad of [
      null,
      'x',
      { ...good, format: 'other' },
      { ...good, docs: good.docs.slice(0, -1) },
      { ...good, docs: [...good.docs, 1] },
      { ...good, ids: ['a', 'a'] },
      { ...good, terms: [] },
      { ...good, terms: [...good.terms, good.terms[0]!] },
    ]) {
      expect(() => LexicalIndex.fromState(bad)).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA' }));
    }
  });
});

describe('LexicalIndex: one question asked twice in a turn', () => {
  const words = ['tea', 'coffee', 'lisbon', 'porto', 'train', 'museum', 'beach', 'kids', 'cello', 'rain'];
  function filled(n: number): LexicalIndex {
    const random = seededRandom(7);
    const index = new LexicalIndex();
    for (let i = 0; i < n; i++) {
      const text = Array.from({ length: 6 }, () => words[Math.floor(random() * words.length)]).join(' ');
      index.set(`d${i}`, text);
    }
    return index;
  }
  const fresh = (index: () => LexicalIndex, query: string, limit: number) => index().search(query, { limit });

  it('answers every limit as a fresh index would, in any order, and sees a change made in between', () => {
    const index = filled(400);
    const query = 'tea in lisbon with the kids';
    for (const limit of [8, 20, 3, 100, 8, 1]) {
      expect(index.search(query, { limit })).toEqual(fresh(() => filled(400), query, limit));
    }
    index.set('d5', 'tea tea tea lisbon kids kids');
    index.remove('d6');
    const changed = () => {
      const other = filled(400);
      other.set('d5', 'tea tea tea lisbon kids kids');
      other.remove('d6');
      return other;
    };
    expect(index.search(query, { limit: 8 })).toEqual(fresh(changed, query, 8));
    expect(index.search(query, { limit: 20 })).toEqual(fresh(changed, query, 20));
    expect(index.search('coffee', { limit: 5 })).toEqual(fresh(changed, 'coffee', 5));
  });
});

describe('LexicalIndex: skipping texts that cannot reach the limit', () => {
  // A Zipf-like vocabulary (a few common words, many rare ones) and repeated texts (exact ties): an
  // unfiltered search over enough postings skips texts it can bound out of the top `limit`; a filtered
  // one (a filter that keeps everything) scores every text. Both must give the same hits, scores and order.
  const vocabulary = Array.from({ length: 100 }, (_, i) => `w${i.toString(36)}x`);
  function corpus(seed: number, n: number): Array<[string, string]> {
    const random = seededRandom(seed);
    const word = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)]!;
    const texts: Array<[string, string]> = [];
    for (let i = 0; i < n; i++) {
      const repeat = i > 0 && random() < 0.1;
      const text = repeat
        ? texts[Math.floor(random() * texts.length)]![1]
        : Array.from({ length: 1 + Math.floor(random() * 20) }, word).join(' ');
      texts.push([`d${i}`, text]);
    }
    return texts;
  }
  const everything = () => true;

  it('ranks exactly as scoring every text, after writes and removals and from a restored state', () => {
    const random = seededRandom(11);
    const texts = corpus(3, 12_000);
    for (const feedback of [false, undefined] as const) {
      const index = new LexicalIndex({ feedback });
      for (const [id, text] of texts) index.set(id, text);
      for (let i = 0; i < 1000; i++) index.remove(`d${Math.floor(random() * texts.length)}`);
      for (let i = 0; i < 300; i++) index.set(`n${i}`, texts[Math.floor(random() * texts.length)]![1]);
      const restored = LexicalIndex.fromState(JSON.parse(JSON.stringify(index.exportState())), { feedback });
      for (let q = 0; q < 60; q++) {
        // Common words (many postings) and rarer ones.
        const query = Array.from(
          { length: 2 + Math.floor(random() * 6) },
          () => vocabulary[Math.floor(vocabulary.length * random() ** 3)],
        ).join(' ');
        for (const limit of [1, 5, 32, 200]) {
          const expected = index.search(query, { limit, filter: everything });
          expect(index.search(query, { limit })).toEqual(expected);
          expect(restored.search(query, { limit })).toEqual(expected);
        }
      }
    }
  });
});
