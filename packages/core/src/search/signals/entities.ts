import { ENGLISH_STOP_WORDS } from '../data/english-stop-words.js';

/**
 * People, places, pets and projects in text, found without a model: capitalised names, and relations
 * ("my sister", "her boss", "Caroline's mom") from a small lexicon (English, with the commonest words in
 * German, French and Spanish). A name is linked to a relation where a text states it ("my sister Anna",
 * "Anna, my sister", "a dog named Max").
 */

/** Capitalised words that are not names: function words, question words, days and months. */
const NOT_NAMES: ReadonlySet<string> = new Set([
  ...ENGLISH_STOP_WORDS.split(' ').map((w) => w.replace(/['’]/g, '')),
  ...'hey hi hello oh wow yes yeah no ok okay thanks thank sure well so also just really please dear'.split(
    ' ',
  ),
  ...'monday tuesday wednesday thursday friday saturday sunday'.split(' '),
  ...'january february march april may june july august september october november december'.split(' '),
  ...'user assistant'.split(' '),
]);

/**
 * Relation words (lower case) → the relation they name. Family, partners, friends, work, pets and the
 * people who help; English first, then the German, French and Spanish words for the commonest.
 */
const RELATIONS: ReadonlyMap<string, string> = new Map(
  (
    [
      ['mother', 'mom mum mommy mother mama mutter mère mere madre'],
      ['father', 'dad daddy father papa vater père pere padre'],
      ['parents', 'parents eltern'],
      ['sister', 'sister sis schwester sœur soeur hermana'],
      ['brother', 'brother bro bruder frère frere hermano'],
      ['sibling', 'sibling siblings'],
      ['son', 'son sohn fils hijo'],
      ['daughter', 'daughter tochter fille hija'],
      ['children', 'kid kids child children kinder enfants hijos'],
      ['wife', 'wife frau femme esposa'],
      ['husband', 'husband mann mari esposo marido'],
      ['partner', 'partner spouse fiancé fiance fiancée fiancee'],
      ['boyfriend', 'boyfriend freund novio'],
      ['girlfriend', 'girlfriend freundin novia'],
      ['friend', 'friend buddy pal bestie ami amie amigo amiga'],
      ['grandmother', 'grandma grandmother granny nana oma grand-mère abuela'],
      ['grandfather', 'grandpa grandfather opa grand-père abuelo'],
      ['aunt', 'aunt auntie tante tía tia'],
      ['uncle', 'uncle onkel oncle tío tio'],
      ['cousin', 'cousin cousine primo prima'],
      ['niece', 'niece nichte nièce sobrina'],
      ['nephew', 'nephew neffe neveu sobrino'],
      ['boss', 'boss manager supervisor jefe jefa'],
      ['colleague', 'colleague coworker co-worker kollege kollegin collègue compañero'],
      ['teammate', 'teammate teammates'],
      ['roommate', 'roommate flatmate housemate'],
      ['neighbor', 'neighbor neighbour nachbar voisin vecino'],
      ['teacher', 'teacher professor tutor lehrer professeur profesor'],
      ['mentor', 'mentor coach trainer'],
      ['doctor', 'doctor therapist dentist arzt médecin médico'],
      ['dog', 'dog puppy pup hund chien perro'],
      ['cat', 'cat kitten katze gato'],
      ['pet', 'pet pets haustier'],
    ] as const
  ).flatMap(([relation, words]) => words.split(' ').map((w) => [w, relation] as const)),
);

const NAME = /\p{Lu}[\p{Ll}\p{Lu}'’-]*\p{L}|\p{Lu}/gu;
const POSSESSIVE = /['’]s?$/u;
const WORD = /[\p{L}'’-]+/gu;
const OWNER =
  /^(?:my|his|her|their|our|your|mein(?:e|er|em|en)?|sein(?:e)?|ihr(?:e)?|mon|ma|mes|sa|ses|mi|mis|su|sus)$/iu;

function nameOf(word: string): string | undefined {
  const bare = word.replace(POSSESSIVE, '');
  if (bare.length < 2 || bare.toUpperCase() === bare) return undefined;
  return NOT_NAMES.has(bare.toLowerCase()) ? undefined : bare.toLowerCase();
}

/** The names in `text` (lower case, possessive dropped), in order of first mention. */
export function names(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(NAME)) {
    const name = nameOf(m[0]);
    if (name) out.add(name);
  }
  return [...out];
}

/** What a text is about first: the first name in it ("Caroline said, …", "Anna moved to Berlin"). */
export function subjectOf(text: string): string | undefined {
  for (const m of text.matchAll(NAME)) {
    const name = nameOf(m[0]);
    if (name) return name;
  }
  return undefined;
}

/**
 * The relations a query asks about through an owner ("my sister", "her boss", "Caroline's mom"), as
 * relation names ("sister", "boss", "mother").
 */
export function relationsAsked(query: string): string[] {
  const words = query.match(WORD) ?? [];
  const out = new Set<string>();
  for (let i = 1; i < words.length; i++) {
    const relation = RELATIONS.get(words[i]!.toLowerCase());
    if (!relation) continue;
    const owner = words[i - 1]!;
    if (OWNER.test(owner) || POSSESSIVE.test(owner)) out.add(relation);
  }
  return [...out];
}

/**
 * Names that `text` links to one of `relations`: "my sister Anna", "her boss, Tom", "Anna, my sister",
 * "Anna is my sister", "a dog named Max".
 */
export function linkedNames(text: string, relations: readonly string[]): string[] {
  if (relations.length === 0) return [];
  const words = [...text.matchAll(WORD)].map((m) => m[0]);
  const out = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    const relation = RELATIONS.get(words[i]!.toLowerCase());
    if (!relation || !relations.includes(relation)) continue;
    // After: "sister Anna", "sister, Anna", "dog named Max", "boss called Tom".
    const after = /^(?:named|called)$/i.test(words[i + 1] ?? '') ? words[i + 2] : words[i + 1];
    const a = after && /^\p{Lu}/u.test(after) ? nameOf(after) : undefined;
    if (a) out.add(a);
    // Before: "Anna, my sister", "Anna is my sister".
    const k = OWNER.test(words[i - 1] ?? '') ? i - 2 : -1;
    const before = /^(?:is|was)$/i.test(words[k] ?? '') ? words[k - 1] : words[k];
    const b = before && /^\p{Lu}/u.test(before) ? nameOf(before) : undefined;
    if (b) out.add(b);
  }
  return [...out];
}

/** Words that open a form of address: "Hey Mel!", "Thanks Caroline!", "Congrats, Jon!". */
const GREETING =
  /(?:^|[\s"“'‘(])(?:hey|hi|hello|thanks|thank you|wow|oh|yeah|yes|congrats|congratulations|sorry|dear|bye|morning|evening)[,!]?\s*$/iu;

/** A name that stands at the start of a sentence, a quote or after a comma. */
const CLAUSE_START = /(?:^|[,"“‘(]|[.!?]\s)\s*$/u;

/**
 * Whether `text` names one of `people` (lower case) and only to address them: "Wow, Caroline!", "Hey
 * Mel, …", "That's great news, Jon." — the name is followed by punctuation and opens a clause or follows a
 * greeting. A turn that says "I went with Caroline." or "Caroline's art…" is about her; one that talks to
 * her is not.
 */
export function addressesOnly(text: string, people: ReadonlySet<string>): boolean {
  let addressed = false;
  for (const m of text.matchAll(NAME)) {
    const name = nameOf(m[0]);
    if (!name || !people.has(name)) continue;
    const end = m.index + m[0].length;
    const before = text.slice(Math.max(0, m.index - 24), m.index);
    if (!/^[,!?.]/u.test(text.slice(end, end + 1))) return false;
    if (!CLAUSE_START.test(before) && !GREETING.test(before)) return false;
    addressed = true;
  }
  return addressed;
}
