import { describe, expect, it } from 'vitest';
import type { Scope } from '../src/foundation/scope.js';
import {
  addressesOnly,
  linkedNames,
  names,
  relationsAsked,
  subjectOf,
} from '../src/search/signals/entities.js';
import { asksForChoice, statesPreference } from '../src/search/signals/preferences.js';
import { questionShare } from '../src/search/signals/questions.js';
import {
  querySignals,
  rerankCandidates,
  type SignalCandidate,
  type SignalWeights,
} from '../src/search/signals/rerank.js';
import { asksWhen, tellsTime, timeSpans } from '../src/search/signals/time.js';
import { DelegatingFactStore } from '../src/store/facts/delegating.js';
import { InMemoryFactStore } from '../src/store/facts/memory.js';
import type { FactListOptions } from '../src/store/facts/record.js';
import { RecallFactStore } from '../src/store/recall/facts.js';
import { ManualClock } from '../src/testing.js';

const day = (iso: string) => ({
  from: Date.parse(`${iso}T00:00:00Z`),
  to: Date.parse(`${iso}T00:00:00Z`) + 86_400_000,
});
const REF = Date.UTC(2023, 4, 8, 13, 56); // Monday 8 May 2023, 13:56 UTC
const spansOf = (text: string) => timeSpans(text, REF);

describe('time expressions', () => {
  it('reads absolute dates in the usual English orders, with or without a year', () => {
    expect(spansOf('on 16 November, 2023')).toEqual([day('2023-11-16')]);
    expect(spansOf('on November 16th, 2023')).toEqual([day('2023-11-16')]);
    expect(spansOf('the 8th of May')).toEqual([day('2023-05-08')]);
    expect(spansOf('2022-01-31')).toEqual([day('2022-01-31')]);
    expect(spansOf('in May 2022')).toEqual([{ from: Date.UTC(2022, 4, 1), to: Date.UTC(2022, 5, 1) }]);
    expect(spansOf('in 2022')).toEqual([{ from: Date.UTC(2022, 0, 1), to: Date.UTC(2023, 0, 1) }]);
    expect(spansOf('since June')).toEqual([{ from: Date.UTC(2023, 5, 1), to: Date.UTC(2023, 6, 1) }]);
  });

  it('counts each word once: a full date is one day, not also its month and year', () => {
    expect(spansOf('What did Tim say on 16 November, 2023?')).toHaveLength(1);
  });

  it('resolves relative expressions against the reference time', () => {
    expect(spansOf('I went to a support group yesterday')).toEqual([day('2023-05-07')]);
    expect(spansOf('last night')).toEqual([day('2023-05-07')]);
    expect(spansOf('this morning')).toEqual([day('2023-05-08')]);
    expect(spansOf('three days ago')).toEqual([day('2023-05-05')]);
    expect(spansOf('last week')).toEqual([{ from: Date.UTC(2023, 4, 1), to: Date.UTC(2023, 4, 8) }]);
    expect(spansOf('a few months ago')).toEqual([{ from: Date.UTC(2023, 1, 1), to: Date.UTC(2023, 2, 1) }]);
    expect(spansOf('last year')).toEqual([{ from: Date.UTC(2022, 0, 1), to: Date.UTC(2023, 0, 1) }]);
  });

  it('knows the commonest German, French and Spanish words', () => {
    const lastWeek = [{ from: Date.UTC(2023, 4, 1), to: Date.UTC(2023, 4, 8) }];
    expect(spansOf('letzte Woche')).toEqual(lastWeek);
    expect(spansOf('la semaine dernière')).toEqual(lastWeek);
    expect(spansOf('la semana pasada')).toEqual(lastWeek);
    expect(spansOf('gestern')).toEqual([day('2023-05-07')]);
    expect(spansOf('el 3 de mayo de 2021')).toEqual([day('2021-05-03')]);
  });

  it('tells a question asking for a time or a duration, in several languages', () => {
    expect(asksWhen('When did Caroline give a speech?')).toBe(true);
    expect(asksWhen('How long has she had the turtles?')).toBe(true);
    expect(asksWhen('What year did he move?')).toBe(true);
    expect(asksWhen('Wann war das Konzert?')).toBe(true);
    expect(asksWhen('¿Cuándo fue el concierto?')).toBe(true);
    expect(asksWhen('What did Caroline say about the speech?')).toBe(false);
  });

  it('tells a text that dates an event or states a duration', () => {
    expect(
      tellsTime('I gave a talk at a school last week', spansOf('I gave a talk at a school last week')),
    ).toBe(true);
    expect(tellsTime("I've had them for 3 years now", [])).toBe(true);
    expect(tellsTime('Seven years now, and I love it', [])).toBe(true);
    expect(tellsTime('I gave a talk at a school', [])).toBe(false);
  });

  it('finds nothing in text without a time, and no month in the verb "may"', () => {
    expect(spansOf('We may go hiking with the kids')).toEqual([]);
    expect(spansOf('I love pottery')).toEqual([]);
  });
});

describe('entities', () => {
  it('finds capitalised names, not function words, days or months', () => {
    expect(names('What did Caroline tell Melanie on Monday in May?')).toEqual(['caroline', 'melanie']);
    expect(names("What is Caroline's identity?")).toEqual(['caroline']);
  });

  it('takes the first name as the subject', () => {
    expect(subjectOf('Caroline said, "Hey Mel!"')).toBe('caroline');
    expect(subjectOf('i moved here')).toBeUndefined();
  });

  it('reads relations asked through an owner', () => {
    expect(relationsAsked('What does my sister do?')).toEqual(['sister']);
    expect(relationsAsked("Where does Caroline's mom live?")).toEqual(['mother']);
    expect(relationsAsked('Does her boss like jazz?')).toEqual(['boss']);
    expect(relationsAsked('Is a sister city nice?')).toEqual([]);
  });

  it('links names to relations where a text states them', () => {
    expect(linkedNames('My sister Anna moved to Berlin', ['sister'])).toEqual(['anna']);
    expect(linkedNames('Tom, my boss, is strict', ['boss'])).toEqual(['tom']);
    expect(linkedNames('Anna is my sister', ['sister'])).toEqual(['anna']);
    expect(linkedNames('We adopted a dog named Max', ['dog'])).toEqual(['max']);
    expect(linkedNames('My brother Ben', ['sister'])).toEqual([]);
  });
});

describe('forms of address', () => {
  const caroline = new Set(['caroline']);

  it('tells a name used only to talk to someone', () => {
    expect(addressesOnly('Melanie said, "Wow, Caroline! That\'s amazing."', caroline)).toBe(true);
    expect(addressesOnly('Melanie said, "Hey Caroline, how are you?"', caroline)).toBe(true);
    expect(addressesOnly('Melanie said, "Thanks Caroline!"', caroline)).toBe(true);
    expect(addressesOnly('That is great news, Caroline.', caroline)).toBe(true);
  });

  it('does not count a text that is about the person, or does not name them', () => {
    expect(addressesOnly('Melanie said, "I went with Caroline."', caroline)).toBe(false);
    expect(addressesOnly('I told Caroline, she agreed.', caroline)).toBe(false);
    expect(addressesOnly("Thanks, Caroline! Caroline's art is great", caroline)).toBe(false);
    expect(addressesOnly('Thanks, Melanie!', caroline)).toBe(false);
  });
});

describe('questions', () => {
  it('measures the share of a text that asks', () => {
    expect(questionShare('What got you into running?')).toBe(1);
    expect(questionShare('I ran 10k today.')).toBe(0);
    expect(questionShare('Melanie said, "Wow! What got you into running?"')).toBeGreaterThan(0.5);
    expect(questionShare('I ran 10k today, my best time so far! Have you run?')).toBeLessThan(0.5);
    expect(questionShare('')).toBe(0);
  });
});

describe('preferences', () => {
  it('tells a request for a choice or a recommendation', () => {
    expect(asksForChoice('What dessert should I bring?')).toBe(true);
    expect(asksForChoice('Can you recommend a book?')).toBe(true);
    expect(asksForChoice('Would Melanie be more interested in a national park or a theme park?')).toBe(true);
    expect(asksForChoice('When did Caroline move?')).toBe(false);
  });

  it('tells a stated preference or restriction', () => {
    expect(statesPreference("I've been trying to cut down on sugar")).toBe(true);
    expect(statesPreference('She loves hiking')).toBe(true);
    expect(statesPreference('Ich liebe Jazz')).toBe(true);
    expect(statesPreference('We went to the museum')).toBe(false);
  });
});

const ZERO: SignalWeights = {
  context: 0,
  session: 0,
  entity: 0,
  time: 0,
  when: 0,
  preference: 0,
  address: 0,
  question: 0,
};
const order = (
  candidates: Array<SignalCandidate & { id: string }>,
  query: string,
  weights: Partial<SignalWeights>,
) =>
  rerankCandidates(candidates, querySignals(query, REF), { ...ZERO, ...weights }).map((r) => r.candidate.id);

describe('rerankCandidates', () => {
  it('keeps the store order when every signal is off', () => {
    const c = [
      { id: 'a', score: 3, text: 'a' },
      { id: 'b', score: 2, text: 'b' },
    ];
    expect(order(c, 'anything', {})).toEqual(['a', 'b']);
  });

  it('context: a turn rises with the turn before it in the same session', () => {
    const c = [
      { id: 'question', score: 10, text: 'What are their names?', session: 's1', turn: 4 },
      { id: 'other', score: 5, text: 'names of things', session: 's1', turn: 9 },
      { id: 'answer', score: 4, text: 'Luna and Oliver!', session: 's1', turn: 5 },
      { id: 'elsewhere', score: 4.5, text: 'names', session: 's2', turn: 5 },
    ];
    expect(order(c, 'pet names', { context: 0.3 })).toEqual(['question', 'answer', 'other', 'elsewhere']);
  });

  it('entity: a candidate about the person the query names rises', () => {
    const c = [
      { id: 'mel', score: 10, text: 'Melanie said, "Caroline, pottery is fun"' },
      { id: 'caro', score: 9, text: 'Caroline said, "I paint"' },
    ];
    expect(order(c, 'What does Caroline do?', { entity: 0.3 })).toEqual(['caro', 'mel']);
  });

  it('address: a reply that only talks to the person asked about falls below what they said', () => {
    const c = [
      { id: 'reply', score: 10, text: 'Melanie said, "Wow, Caroline! Painting is so relaxing."' },
      { id: 'told', score: 9, text: 'Melanie said, "I painted with Caroline."' },
      { id: 'said', score: 8, text: 'Caroline said, "I started painting again."' },
    ];
    expect(order(c, 'What does Caroline paint?', { address: 0.5 })).toEqual(['told', 'said', 'reply']);
    expect(order(c, 'What does Melanie paint?', { address: 0.5 })).toEqual(['reply', 'told', 'said']);
  });

  it('question: a turn that asks falls below the turns that tell', () => {
    const c = [
      { id: 'asks', score: 10, text: 'What got you into running?' },
      { id: 'tells', score: 7, text: 'I started running to de-stress.' },
    ];
    expect(order(c, 'Why does she run?', { question: 0.4 })).toEqual(['tells', 'asks']);
    expect(order(c, 'Why does she run?', {})).toEqual(['asks', 'tells']);
  });

  it('time: a candidate whose event time or own date is in the asked span rises', () => {
    const c = [
      { id: 'june', score: 10, text: 'went hiking', time: Date.UTC(2023, 5, 2) },
      { id: 'may', score: 8, text: 'went hiking', time: Date.UTC(2023, 4, 3) },
      { id: 'mentioned', score: 7, text: 'went hiking yesterday', time: Date.UTC(2023, 4, 4) },
    ];
    expect(order(c, 'Where did she hike on 3 May?', { time: 1 })).toEqual(['may', 'mentioned', 'june']);
  });

  it('when: a question asking for a time lifts the candidates that tell one', () => {
    const c = [
      { id: 'talk', score: 10, text: 'The school talk was great', time: Date.UTC(2023, 4, 3) },
      { id: 'dated', score: 9, text: 'I gave a talk at a school last week', time: Date.UTC(2023, 4, 3) },
    ];
    expect(order(c, 'When did she give a talk at a school?', { when: 0.3 })).toEqual(['dated', 'talk']);
    expect(order(c, 'Where did she give a talk?', { when: 0.3 })).toEqual(['talk', 'dated']);
  });

  it('preference: only a request for a choice lifts stated preferences', () => {
    const c = [
      { id: 'fact', score: 10, text: 'Brought cake to the party' },
      { id: 'pref', score: 9, text: 'Trying to cut down on sugar' },
    ];
    expect(order(c, 'What dessert should I bring?', { preference: 0.2 })).toEqual(['pref', 'fact']);
    expect(order(c, 'What dessert did I bring?', { preference: 0.2 })).toEqual(['fact', 'pref']);
  });
});

describe('RecallFactStore', () => {
  const alice = { userId: 'alice' };

  it('consults the preference profile for a choice, though no word is shared', async () => {
    const store = new RecallFactStore(new InMemoryFactStore());
    await store.create(alice, { content: 'Avoids sugar these days', category: 'user-preferences/food' });
    await store.create(alice, { content: 'Bring dessert to the dinner on Friday' });
    const hits = await store.search(alice, { query: 'what dessert should I bring', limit: 5 });
    expect(hits.map((h) => h.fact.content)).toContain('Avoids sugar these days');
    const plain = await store.search(alice, { query: 'what dessert did I bring', limit: 5 });
    expect(plain.map((h) => h.fact.content)).toEqual(['Bring dessert to the dinner on Friday']);
  });

  it('lists the preference profile once per user while nothing is written, and sees new preferences', async () => {
    const clock = new ManualClock(Date.UTC(2023, 4, 10));
    const inner = new InMemoryFactStore({ clock });
    let lists = 0;
    const counting = new (class extends DelegatingFactStore {
      override list(scope: Scope, options?: FactListOptions) {
        lists += 1;
        return super.list(scope, options);
      }
    })(inner);
    const store = new RecallFactStore(counting, { clock });
    const contents = async () =>
      (await store.search(alice, { query: 'what dessert should I bring', limit: 5 })).map(
        (h) => h.fact.content,
      );
    await store.create(alice, { content: 'Avoids sugar these days', category: 'user-preferences/food' });
    await store.create(alice, { content: 'Bring dessert to the dinner on Friday' });
    expect(await contents()).toContain('Avoids sugar these days');
    await contents();
    expect(lists).toBe(1);
    // A write through this store is seen at once.
    await store.create(alice, { content: 'Loves lemon tart', category: 'user-preferences/food' });
    expect(await contents()).toContain('Loves lemon tart');
    expect(lists).toBe(2);
    // Another writer's preference (straight to the store) is seen once the kept profile is old.
    await inner.create(alice, { content: 'Allergic to nuts', category: 'user-preferences/health' });
    clock.advance(10_000);
    expect(await contents()).toContain('Allergic to nuts');
  });

  it('brings up what a relation’s linked name is about', async () => {
    const store = new RecallFactStore(new InMemoryFactStore());
    await store.create(alice, { content: 'My sister Anna lives in Berlin' });
    await store.create(alice, { content: 'Tom started pottery' });
    await store.create(alice, { content: 'Anna started pottery' });
    const plain = await store.store.search(alice, { query: 'what did my sister start?' });
    const signalled = await store.search(alice, { query: 'what did my sister start?' });
    const rank = (hits: Array<{ fact: { content: string } }>, content: string) =>
      hits.findIndex((h) => h.fact.content === content);
    expect(rank(plain, 'Tom started pottery')).toBeLessThan(rank(plain, 'Anna started pottery'));
    expect(rank(signalled, 'Anna started pottery')).toBeLessThan(rank(signalled, 'Tom started pottery'));
  });

  it('ranks by event time for a query naming a time, against the clock for relative ones', async () => {
    const clock = new ManualClock(Date.UTC(2023, 4, 10));
    const store = new RecallFactStore(new InMemoryFactStore({ clock }), { clock });
    const old = await store.create(alice, { content: 'Went to the gym', eventTime: '2023-03-01T10:00:00Z' });
    const recent = await store.create(alice, {
      content: 'Went to the gym',
      eventTime: '2023-05-03T10:00:00Z',
    });
    expect((await store.search(alice, { query: 'gym' }))[0]!.fact.id).toBe(old.id);
    expect((await store.search(alice, { query: 'gym last week' }))[0]!.fact.id).toBe(recent.id);
    expect((await store.search(alice, { query: 'gym in March' }))[0]!.fact.id).toBe(old.id);
  });

  it('passes filters, limits and empty queries to the store', async () => {
    const store = new RecallFactStore(new InMemoryFactStore());
    await store.create(alice, { content: 'likes tea', category: 'food' });
    await store.create(alice, { content: 'likes tea a lot', category: 'drinks' });
    expect(
      (await store.search(alice, { query: 'tea', category: 'food' })).map((h) => h.fact.category),
    ).toEqual(['food']);
    expect(await store.search(alice, { query: 'tea', limit: 1 })).toHaveLength(1);
    expect((await store.search(alice, {})).map((h) => h.fact.content)).toHaveLength(2);
  });
});
