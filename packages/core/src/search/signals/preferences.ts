/**
 * Preferences without a model: whether a request asks for a choice or a recommendation ("what dessert
 * should I bring?", "any book you'd recommend?", "would she rather…"), and whether a text states a
 * preference ("I love hiking", "I've been trying to cut down on sugar", "she can't stand horror films").
 * English, with the commonest phrasings in German, French and Spanish. A model-written preference (the
 * dream's inferred preferences, extraction's `user-preferences` facts) is one by its category.
 */

const CHOICE =
  /\b(?:recommend\w*|suggest\w*|advi[cs]e|should (?:i|we|he|she|they)|which (?:one|\w+ (?:is|would|should))|what (?:\w+ )?(?:should|could|would|can) (?:i|we|he|she|they)|would (?:\w+ )?(?:rather|prefer|like|enjoy|want|be (?:more )?interested)|prefer\w*|favou?rite|ideas? for|what to (?:get|buy|cook|make|bring|wear|watch|read|eat|order|gift)|gift for|good (?:place|restaurant|book|movie|film|idea)s?|empfiehl\w*|empfehl\w*|soll(?:te)? ich|welche[nrs]? (?:soll|würde)|recommand\w*|conseill\w*|que (?:dois|devrais)-je|recomiend\w*|recomend\w*|qué (?:debería|me recomiendas))\b/iu;

const STATEMENT =
  /\b(?:love[sd]?|loving|like[sd]?|enjoy(?:s|ed|ing)?|prefer(?:s|red)?|favou?rite|fan of|big on|into|passionate about|keen on|hate[sd]?|dislike[sd]?|can(?:no|')t stand|allergic|vegetarian|vegan|gluten|lactose|avoid(?:s|ed|ing)?|trying to (?:cut|avoid|eat|stop|quit|reduce)|cut(?:ting)? (?:down|back) on|(?:don't|doesn't|never) (?:eat|drink|like)|mag|liebe|hasse|lieblings\w*|j'aime|j'adore|je déteste|préf[eè]r\w*|me gusta\w*|me encanta\w*|odio|prefiero)\b/iu;

/** Whether a request asks for a choice or a recommendation. */
export function asksForChoice(query: string): boolean {
  return CHOICE.test(query);
}

/** Whether a text states a like, a dislike, a habit of choice or a restriction. */
export function statesPreference(text: string): boolean {
  return STATEMENT.test(text);
}

/** The category prefix of preference facts (extraction's and the dream's): `user-preferences/...`. */
export const PREFERENCE_CATEGORY = 'user-preferences';
