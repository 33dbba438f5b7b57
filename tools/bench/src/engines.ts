import { LexicalIndex, type LexicalIndexOptions } from '@kioku/core/adapter';
import MiniSearch from 'minisearch';
import winkBm25 from 'wink-bm25-text-search';
import nlp from 'wink-nlp-utils';
import type { Unit } from './locomo.js';
import { PlainBm25 } from './plain-bm25.js';

/** Ids of the best `limit` units for `query`, best first (a store's search answers asynchronously). */
export type Searcher = (query: string, limit: number) => string[] | Promise<string[]>;

export interface Engine {
  name: string;
  build(units: readonly Unit[]): Searcher | Promise<Searcher>;
}

/** Kioku's LexicalIndex, built incrementally with `set` exactly as the stores do. */
export function kiokuEngine(name = 'Kioku', options?: LexicalIndexOptions): Engine {
  return {
    name,
    build(units) {
      const index = new LexicalIndex(options);
      for (const unit of units) index.set(unit.id, unit.text);
      return (query, limit) => index.search(query, { limit }).map((hit) => hit.id);
    },
  };
}

export const plainBm25Engine: Engine = {
  name: 'BM25 (plain)',
  build(units) {
    const index = new PlainBm25(1.5, 0.75).build(units);
    return (query, limit) => index.search(query, limit);
  },
};

/** MiniSearch with its defaults: its tokenizer and lower-casing, OR, BM25+ k=1.2 b=0.7 d=0.5. */
export const miniSearchEngine: Engine = {
  name: 'MiniSearch',
  build(units) {
    const mini = new MiniSearch<Unit>({ fields: ['text'] });
    mini.addAll(units as Unit[]);
    return (query, limit) =>
      mini
        .search(query)
        .slice(0, limit)
        .map((r) => r.id as string);
  },
};

/**
 * wink-bm25-text-search configured as in its wink-nlp-utils examples: lower-case, tokenize,
 * propagate negations, remove stop words, stem (Porter2); BM25 k1=1.2 b=0.75.
 */
export const winkEngine: Engine = {
  name: 'wink-bm25',
  build(units) {
    const engine = winkBm25();
    engine.defineConfig({ fldWeights: { text: 1 } });
    engine.definePrepTasks([
      nlp.string.lowerCase,
      nlp.string.removeExtraSpaces,
      nlp.string.tokenize0,
      nlp.tokens.propagateNegations,
      nlp.tokens.removeWords,
      nlp.tokens.stem,
    ] as Array<(input: never) => unknown>);
    for (const unit of units) engine.addDoc({ text: unit.text }, unit.id);
    engine.consolidate();
    return (query, limit) => engine.search(query, limit).map(([id]) => id);
  },
};
