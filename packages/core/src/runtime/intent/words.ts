/*
 * Word lists of the deterministic intent classifier. They name what a user's message can point at without
 * saying what it is — the things a user works with ("the DB", "that file") — and the phrases that point
 * back in time ("as before", "last time").
 */

const set = (words: string) => new Set(words.split(/\s+/).filter(Boolean));

/**
 * Things of the user's own world: after "the", "that", "my", … they name one particular instance the
 * message does not describe ("connect to the DB", "send that report").
 */
export const ARTIFACTS: ReadonlySet<string> = set(`
  db dbs database databases server servers repo repos repository branch project projects file files folder
  directory document documents doc docs report reports spreadsheet sheet presentation deck slides config
  configuration settings script scripts code app application service cluster environment env deployment
  build pipeline ticket tickets issue bug bugs pr meeting meetings call appointment reservation booking
  order orders account password credentials key keys token email emails mail invoice contract draft plan
  schedule calendar task tasks notes note budget recipe playlist team client customer boss manager
  doctor flight trip car house apartment laptop machine printer vm instance api endpoint table query
  dashboard site website page blog post photo photos picture pictures video book books usual thing
  things stuff place one guy error errors problem logs log output results result changes change version
  release backup migration ssh host cron job jobs container image bucket
`);

/** Synonyms a context may use for an artifact word (both directions are checked). */
export const ARTIFACT_SYNONYMS: ReadonlyMap<string, readonly string[]> = new Map([
  ['db', ['database']],
  ['dbs', ['databases']],
  ['database', ['db']],
  ['repo', ['repository']],
  ['repository', ['repo']],
  ['config', ['configuration', 'settings']],
  ['configuration', ['config']],
  ['env', ['environment']],
  ['environment', ['env']],
  ['doc', ['document']],
  ['docs', ['documents', 'documentation']],
  ['pr', ['pull request']],
  ['vm', ['virtual machine']],
]);

/**
 * Verbs that act on the user's things (rather than produce text): said alone or with a bare object
 * ("deploy", "book a table", "connect"), they miss the arguments memory could supply.
 */
export const OPERATIONAL_VERBS: ReadonlySet<string> = set(`
  connect deploy book order buy pay transfer send email text message call phone schedule install restart
  reboot run open reply cancel reorder rebook renew login log sign push pull merge commit ship publish
  upload download print share invite add remove delete update restore rollback roll migrate backup
  submit file renew reserve invite notify ping
`);

/** Capitalized words that are not names of someone or something the user knows. */
export const COMMON_CAPITALIZED: ReadonlySet<string> = set(`
  i i'm i've i'd i'll ok okay monday tuesday wednesday thursday friday saturday sunday january february
  march april may june july august september october november december english french spanish german
  italian portuguese dutch japanese chinese korean russian arabic hindi latin greek god christmas easter
  internet earth moon sun
`);

/** Words after which a capitalized word is a place, a title or a language rather than a person. */
export const PLACE_PREPOSITIONS: ReadonlySet<string> = set('of in from at near across into the a an');

/** Question words and auxiliaries a question starts with. */
export const QUESTION_STARTS: ReadonlySet<string> = set(`
  what when where who whom whose which why how is are was were do does did can could would should will
  have has had am may might shall
`);

/** Pronouns that need an antecedent. */
export const PRONOUNS: ReadonlySet<string> = set('it them they he she him her his hers their theirs');

/** Person pronouns: their antecedent is someone (a name, "my sister"). */
export const PERSON_PRONOUNS: ReadonlySet<string> = set('he she him her his hers');
