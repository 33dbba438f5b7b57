import { endianness } from 'node:os';
import { CorruptDataError } from '@kioku/core';
import type { LexicalIndexState } from '@kioku/core/adapter';

/**
 * The search index state as stored in `…:idx` (after its `epoch \n version \n` header): binary, because
 * parsing core's JSON state (an array of about 20 numbers per fact) was a third of a new process's first
 * search at 100,000 facts, most of it garbage collection.
 *
 * `KLXI`, u32 format version (1), u32 byte length + JSON of `terms`, u32 byte length + JSON of `ids`,
 * zero padding to a multiple of 4, u32 count + `docs` as u32 (all little-endian). A state written as core's
 * JSON (`{…`, by earlier versions) is read too.
 */
const MAGIC = Buffer.from('KLXI');
const VERSION = 1;
const LITTLE_ENDIAN = endianness() === 'LE';

export function encodeIndexState(state: LexicalIndexState): Buffer {
  const terms = Buffer.from(JSON.stringify(state.terms));
  const ids = Buffer.from(JSON.stringify(state.ids));
  const head = 8 + 4 + terms.length + 4 + ids.length;
  const padded = Math.ceil(head / 4) * 4;
  const out = Buffer.alloc(padded + 4 + 4 * state.docs.length);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeUInt32LE(terms.length, 8);
  terms.copy(out, 12);
  out.writeUInt32LE(ids.length, 12 + terms.length);
  ids.copy(out, 16 + terms.length);
  out.writeUInt32LE(state.docs.length, padded);
  const docs = new Uint32Array(state.docs);
  if (LITTLE_ENDIAN) Buffer.from(docs.buffer).copy(out, padded + 4);
  else for (let i = 0; i < docs.length; i++) out.writeUInt32LE(docs[i]!, padded + 4 + 4 * i);
  return out;
}

/**
 * The state in `stored` (binary, or core's JSON), for `LexicalIndex.fromState` (which checks its contents).
 * A CorruptDataError when it is neither, or of another binary format version.
 */
export function decodeIndexState(stored: Buffer): unknown {
  const bad = (why: string) => new CorruptDataError(`Stored search index is unusable: ${why}.`);
  if (stored[0] === 0x7b) {
    try {
      return JSON.parse(stored.toString('utf8'));
    } catch (error) {
      throw new CorruptDataError('Stored search index is not valid JSON.', { cause: error });
    }
  }
  if (stored.length < 12 || !stored.subarray(0, 4).equals(MAGIC)) throw bad('unknown format');
  if (stored.readUInt32LE(4) !== VERSION) throw bad(`unknown format version ${stored.readUInt32LE(4)}`);
  try {
    let at = 8;
    const json = () => {
      const length = stored.readUInt32LE(at);
      const value: unknown = JSON.parse(stored.toString('utf8', at + 4, at + 4 + length));
      at += 4 + length;
      return value;
    };
    const terms = json();
    const ids = json();
    at = Math.ceil(at / 4) * 4;
    const count = stored.readUInt32LE(at);
    if (stored.length !== at + 4 + 4 * count) throw bad('wrong length');
    const docs = new Uint32Array(count);
    if (LITTLE_ENDIAN) Buffer.from(docs.buffer).set(stored.subarray(at + 4));
    else for (let i = 0; i < count; i++) docs[i] = stored.readUInt32LE(at + 4 + 4 * i);
    return { format: 'kioku.lexical-index', version: 1, terms, ids, docs };
  } catch (error) {
    if (error instanceof CorruptDataError) throw error;
    throw bad('truncated or unparsable');
  }
}
