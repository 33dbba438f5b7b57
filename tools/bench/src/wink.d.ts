declare module 'wink-bm25-text-search' {
  interface WinkBm25 {
    defineConfig(config: {
      fldWeights: Record<string, number>;
      bm25Params?: { k1?: number; b?: number; k?: number };
      ovFldNames?: string[];
    }): boolean;
    definePrepTasks(tasks: Array<(input: never) => unknown>, field?: string): number;
    addDoc(doc: Record<string, string>, uniqueId: string | number): number;
    consolidate(fp?: number): boolean;
    search(text: string, limit?: number): Array<[string, number]>;
  }
  const bm25: () => WinkBm25;
  export default bm25;
}

declare module 'wink-nlp-utils' {
  const nlp: {
    string: {
      lowerCase(s: string): string;
      removeExtraSpaces(s: string): string;
      tokenize0(s: string): string[];
    };
    tokens: {
      propagateNegations(t: string[]): string[];
      removeWords(t: string[]): string[];
      stem(t: string[]): string[];
    };
  };
  export default nlp;
}

declare module 'wink-porter2-stemmer' {
  const stem: (word: string) => string;
  export default stem;
}

declare module 'wink-lexicon/src/wn-verb-exceptions.js' {
  const verbExceptions: Readonly<Record<string, string>>;
  export default verbExceptions;
}
