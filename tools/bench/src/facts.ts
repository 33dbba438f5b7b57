import { existsSync } from 'node:fs';
import type { Fact } from '@kioku/core';
import { loadLocomo, locomoPath } from './locomo.js';

/** Synthetic but realistic facts: LoCoMo's observation sentences with the people renamed. */
export interface FactSeed {
  content: string;
  category: string;
  tags: string[];
}

const NAMES = [
  'Alice',
  'Bruno',
  'Carmen',
  'Dmitri',
  'Elena',
  'Farah',
  'Gus',
  'Hana',
  'Ivan',
  'Jun',
  'Kofi',
  'Lena',
  'Mateo',
  'Nia',
  'Omar',
  'Priya',
  'Quinn',
  'Rosa',
  'Sven',
  'Tariq',
  'Uma',
  'Viktor',
  'Wen',
  'Ximena',
  'Yusuf',
  'Zoe',
  'Aiko',
  'Ben',
  'Chloe',
  'Diego',
  'Emeka',
  'Freya',
  'Goran',
  'Hiro',
  'Ines',
  'Jonas',
  'Kira',
  'Luis',
  'Mina',
  'Noah',
];

const CATEGORIES = [
  'user-preferences/food',
  'user-preferences/music',
  'hobbies',
  'family',
  'work/projects',
  'health',
  'travel',
  'pets',
  'education',
  'events',
  'general',
];

const TAGS = ['important', 'recent', 'personal', 'plans', 'likes', 'dislikes', 'people', 'places'];

/** Used when the LoCoMo file is absent: simple sentences from a small vocabulary. */
const SUBJECTS = ['likes', 'is learning', 'recently started', 'plans to try', 'stopped', 'volunteers at'];
const OBJECTS = [
  'painting landscapes',
  'the violin',
  'a pottery class',
  'marathon training',
  'the animal shelter',
  'hiking in the Alps',
  'vegan cooking',
  'a book club',
  'Spanish lessons',
  'rock climbing',
  'photography',
  'a community garden',
  'chess tournaments',
  'salsa dancing',
  'the local food bank',
];
const WHEN = ['every weekend', 'since last spring', 'with friends', 'after work', 'with family', 'this year'];

function observations(): string[] {
  if (!existsSync(locomoPath())) {
    const out: string[] = [];
    for (const s of SUBJECTS)
      for (const o of OBJECTS) for (const w of WHEN) out.push(`PERSON ${s} ${o} ${w}.`);
    return out;
  }
  const out: string[] = [];
  for (const conv of loadLocomo()) {
    const speakers = new Set<string>();
    for (const u of conv.units) speakers.add(u.text.slice(0, u.text.indexOf(' said, ')));
    const pattern = new RegExp(`\\b(${[...speakers].join('|')})\\b`, 'g');
    for (const o of conv.observations) out.push(o.replace(pattern, 'PERSON'));
  }
  return out;
}

/** `count` facts, deterministic: sentence i mod S with person (i div S) mod 40. */
export function factSeeds(count: number): FactSeed[] {
  const sentences = observations();
  const seeds: FactSeed[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const sentence = sentences[i % sentences.length]!;
    const name = NAMES[(Math.floor(i / sentences.length) + i) % NAMES.length]!;
    seeds[i] = {
      content: sentence.replaceAll('PERSON', name),
      category: CATEGORIES[i % CATEGORIES.length]!,
      tags: [TAGS[i % TAGS.length]!, ...(i % 3 === 0 ? [TAGS[(i + 3) % TAGS.length]!] : [])],
    };
  }
  return seeds;
}

/** Seed `i` as a stored fact of `userId` (id `f<i>`, imported at `now`): what the store benches restore. */
export function seedFact(seed: FactSeed, i: number, userId: string, now: string): Fact {
  return {
    id: `f${i}`,
    userId,
    content: seed.content,
    category: seed.category,
    tags: seed.tags,
    metadata: {},
    provenance: { source: 'import' },
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
}

/** A fixed list of what an agent asks its fact memory. */
export const QUERIES = [
  'What does Alice like to eat?',
  'Where does Bruno work?',
  'Which instrument does Carmen play?',
  'Does Elena have any pets?',
  'What are Farah hobbies on weekends?',
  'Who is in Gus family?',
  'Where did Hana travel last summer?',
  'What is Ivan studying at school?',
  'Is Jun allergic to anything?',
  'What kind of music does Kofi listen to?',
  'painting class',
  'adopting a dog',
  'marathon running training',
  'volunteering at the shelter',
  'favorite book',
  'camping trip with kids',
  'new job at a startup',
  'mental health support group',
  'birthday party plans',
  'learning to cook vegetarian recipes',
  'When did Lena start pottery?',
  'What sports does Mateo play?',
  'What car does Nia drive?',
  'What does Omar do to relax?',
  'What charity events has Priya organized?',
  'concert tickets',
  'moving to a new city',
  'grandmother passed away',
  'photography hobby',
  'gaming tournament with friends',
];
