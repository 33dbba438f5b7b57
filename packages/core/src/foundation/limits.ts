/** Size limits checked (by the record schemas) before anything is written. Oversized input fails with a ValidationError. */
export interface Limits {
  /** Characters in an id (user, agent, thread, record). */
  idChars: number;
  titleChars: number;
  /** Characters of a fact's content. */
  factContentChars: number;
  /** Characters of a knowledge document's text. */
  documentTextChars: number;
  /** Characters of a working-memory value. */
  workingValueChars: number;
  /** Characters of a session k-v value or transcript entry. */
  sessionValueChars: number;
  /** Characters of a detail (offloaded tool output). */
  detailContentChars: number;
  tagCount: number;
  tagChars: number;
  /** Characters of metadata once serialized as JSON. */
  metadataJsonChars: number;
  /** Characters of a search query. */
  queryChars: number;
}

const MiB = 1024 * 1024;

export const LIMITS: Readonly<Limits> = Object.freeze({
  idChars: 128,
  titleChars: 1_000,
  factContentChars: 2 * MiB,
  documentTextChars: 32 * MiB,
  workingValueChars: 4 * MiB,
  sessionValueChars: 2 * MiB,
  detailContentChars: 16 * MiB,
  tagCount: 32,
  tagChars: 100,
  metadataJsonChars: 64 * 1024,
  queryChars: 4_000,
});
