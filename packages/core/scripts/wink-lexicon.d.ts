/** WordNet's verb exception list (verb.exc) as shipped by wink-lexicon: inflected form → base form. */
declare module 'wink-lexicon/src/wn-verb-exceptions.js' {
  const verbExceptions: Readonly<Record<string, string>>;
  export default verbExceptions;
}
