import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One retrievable unit: a dialog turn, written the way the LoCoMo code writes it. */
export interface Unit {
  id: string;
  text: string;
  /** Its session's number and its place in the session (0 = first turn). */
  session: number;
  turn: number;
  /** When it was said: the session's date plus half a minute per turn (epoch ms, UTC). */
  time: number;
}

export interface Question {
  question: string;
  category: number;
  /** Normalised evidence turn ids (deduplicated). */
  evidence: string[];
}

export interface Conversation {
  sampleId: string;
  units: Unit[];
  /** Session number → its `session_N_date_time` (e.g. `1:56 pm on 8 May, 2023`). */
  sessionDates: Record<number, string>;
  questions: Question[];
  /** LLM-written observation sentences (used by the store bench as realistic fact text). */
  observations: string[];
}

export const CATEGORY_NAMES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** `KIOKU_BENCH_DATA` (a file, or a directory holding locomo10.json), else `<repo>/../shared/bench-data/locomo10.json`. */
export function locomoPath(): string {
  const override = process.env.KIOKU_BENCH_DATA;
  if (override) {
    const resolved = path.resolve(override);
    return resolved.endsWith('.json') ? resolved : path.join(resolved, 'locomo10.json');
  }
  return path.resolve(repoRoot, '..', 'shared', 'bench-data', 'locomo10.json');
}

/**
 * Evidence ids as the README says to normalise them: `'D8:6; D9:17'` and space-separated lists are
 * split, `'D:11:26'` → `D11:26`, `'D30:05'` → `D30:5`, and a bare `'D'` is dropped. Ids that are well
 * formed but name no turn (two in the file) are kept: they count as misses, as in the paper's code.
 */
export function normaliseEvidence(raw: readonly string[]): string[] {
  const out = new Set<string>();
  for (const entry of raw) {
    for (const piece of entry.split(/[;,\s]+/)) {
      const m = /^D:?(\d+):0*(\d+)$/.exec(piece.trim());
      if (m) out.add(`D${m[1]}:${m[2]}`);
    }
  }
  return [...out];
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  observation?: Record<string, Record<string, Array<[string, string | string[]]>>>;
  qa: Array<{ question: string; category: number; evidence: string[] }>;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** `1:56 pm on 8 May, 2023` → epoch ms (UTC); undefined when the text has another shape. */
export function parseLocomoDate(text: string): number | undefined {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) return undefined;
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/** Half a minute per turn after the session's date. */
export const TURN_MS = 30_000;

export function loadLocomo(file = locomoPath()): Conversation[] {
  if (!existsSync(file)) {
    throw new Error(
      `LoCoMo data not found at ${file}. Put locomo10.json in ../shared/bench-data/ or set KIOKU_BENCH_DATA.`,
    );
  }
  const samples = JSON.parse(readFileSync(file, 'utf8')) as RawSample[];
  return samples.map((sample) => {
    const units: Unit[] = [];
    const sessionDates: Record<number, string> = {};
    const sessions = Object.keys(sample.conversation)
      .map((key) => /^session_(\d+)$/.exec(key))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => Number(a[1]) - Number(b[1]));
    let start = Date.UTC(2023, 0, 1);
    for (const m of sessions) {
      const session = Number(m[1]);
      const date = sample.conversation[`session_${m[1]}_date_time`];
      if (typeof date === 'string') sessionDates[session] = date;
      start = parseLocomoDate(typeof date === 'string' ? date : '') ?? start + 86_400_000;
      for (const [turnIndex, turn] of (sample.conversation[m[0]] as RawTurn[]).entries()) {
        let text = `${turn.speaker} said, "${turn.text}"`;
        if (turn.blip_caption) text += ` and shared ${turn.blip_caption}`;
        units.push({
          id: turn.dia_id,
          text,
          session,
          turn: turnIndex,
          time: start + (turnIndex + 1) * TURN_MS,
        });
      }
    }
    const observations: string[] = [];
    for (const session of Object.values(sample.observation ?? {})) {
      for (const perSpeaker of Object.values(session)) {
        for (const entry of perSpeaker) if (typeof entry[0] === 'string') observations.push(entry[0]);
      }
    }
    return {
      sampleId: sample.sample_id,
      units,
      sessionDates,
      questions: sample.qa.map((qa) => ({
        question: qa.question,
        category: qa.category,
        evidence: normaliseEvidence(qa.evidence),
      })),
      observations,
    };
  });
}
