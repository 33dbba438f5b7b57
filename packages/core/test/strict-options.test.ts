import { describe, expect, it } from 'vitest';
import { OptionError } from '../src/adapter.js';
import { createInMemoryStores, KiokuBuilder, ValidationError } from '../src/index.js';

type Case = {
  name: string;
  /** What an app writes (in plain JS, so types do not stop it): a builder and its calls. */
  build: (builder: (options?: object) => KiokuBuilder) => unknown;
  option: string;
  suggestion?: string;
  message: RegExp;
};

// biome-ignore lint/suspicious/noExplicitAny: the cases are what plain JavaScript can pass.
const loose = (value: object) => value as any;

const CASES: Case[] = [
  {
    name: 'a misspelt builder option',
    build: (b) => b({ budgte: { maxTokens: 2000 } }),
    option: 'budgte',
    suggestion: 'budget',
    message: /KiokuBuilder: budgte is not an option .*Did you mean "budget"\?/,
  },
  {
    name: 'a negative budget, refused at construction instead of at the first turn',
    build: (b) => b({ budget: { maxTokens: -5 } }),
    option: 'budget.maxTokens',
    message: /KiokuBuilder: budget\.maxTokens is invalid/,
  },
  {
    name: 'a misspelt budget key',
    build: (b) => b({ budget: { maxToken: 2000 } }),
    option: 'budget.maxToken',
    suggestion: 'maxTokens',
    message: /budget\.maxToken is not an option/,
  },
  {
    name: 'a recall mode that does not exist',
    build: (b) => b({ recall: 'sometimes' }),
    option: 'recall',
    message: /recall is "sometimes", not one of "auto", "always", "never"/,
  },
  {
    name: "withFacts({ mode: 'recal' }), which fell back to 'all'",
    build: (b) => b().withFacts(loose({ mode: 'recal' })),
    option: 'mode',
    suggestion: 'recall',
    message: /withFacts: mode is "recal", not one of "all", "recall", "relevant"\. Did you mean "recall"\?/,
  },
  {
    name: 'an option of another fact mode',
    build: (b) => b().withFacts(loose({ mode: 'recall', showIds: true })),
    option: 'showIds',
    message: /withFacts \(mode 'recall'\): showIds is not an option/,
  },
  {
    name: 'withFacts() twice with one mode',
    build: (b) => b().withFacts().withFacts(),
    option: 'mode',
    message: /withFacts: mode 'all' is already installed/,
  },
  {
    name: 'withMemory() beside withFacts({ mode: recall })',
    build: (b) => b().withFacts({ mode: 'recall' }).withMemory(),
    option: 'mode',
    message: /'recall' is already installed/,
  },
  {
    name: 'a misspelt feature option',
    build: (b) => b().withKnowledge(loose({ stratgy: 'indexed' })),
    option: 'stratgy',
    suggestion: 'strategy',
    message: /withKnowledge: stratgy is not an option/,
  },
  {
    name: 'a knowledge strategy that does not exist',
    build: (b) => b().withKnowledge(loose({ strategy: 'indexd' })),
    option: 'strategy',
    suggestion: 'indexed',
    message: /strategy is "indexd"/,
  },
  {
    name: 'an option of a nested group in withMemory',
    build: (b) => b().withMemory(loose({ history: { maxTurn: 4 } })),
    option: 'history.maxTurn',
    suggestion: 'maxTurns',
    message: /withMemory: history\.maxTurn is not an option/,
  },
  {
    name: 'a fact-limit policy that does not exist',
    build: (b) => b().withFactLimits(loose({ maxFacts: 10, policy: 'least-recaled' })),
    option: 'policy',
    suggestion: 'least-recalled',
    message: /withFactLimits: policy is "least-recaled"/,
  },
  {
    name: 'plan mode, which takes no options',
    build: (b) => b().withPlanMode(loose({ maxTokens: 100 })),
    option: 'maxTokens',
    message: /withPlanMode: maxTokens is not an option \(valid: none\)/,
  },
];

describe('strict options: refused when given, with the key and the nearest valid one', () => {
  const builder = (options: object = {}) =>
    new KiokuBuilder(loose({ stores: createInMemoryStores(), ...options }));

  it.each(CASES)('$name', ({ build, option, suggestion, message }) => {
    let thrown: unknown;
    try {
      build(builder);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OptionError);
    expect(thrown).toBeInstanceOf(ValidationError);
    const error = thrown as OptionError;
    expect(error.code).toBe('VALIDATION');
    expect(error.option).toBe(option);
    expect(error.suggestion).toBe(suggestion);
    expect(error.message).toMatch(message);
  });

  it('accepts every documented combination, fact modes combined included', () => {
    const kioku = builder({ budget: { maxTokens: 4000, shares: { facts: 500 } }, recall: 'auto' })
      .withFacts({ mode: 'all', showIds: true })
      .withMemory({ recall: { maxResults: 3 }, history: { maxTurns: 4 } })
      .withKnowledge({ strategy: 'indexed', topK: 2 })
      .withPlanMode()
      .withToolOutputOffload({ thresholdTokens: 300 })
      .withFeedback()
      .build();
    expect(kioku).toBeDefined();
  });
});
