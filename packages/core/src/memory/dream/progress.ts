/** A dream pass. */
export type DreamPassName = 'consolidation' | 'preferences' | 'eviction';

/**
 * Where a pass is: `reading` its inputs, `model` (asking the model, with what it read), `applying` its
 * changeset (or keeping it, on a dry run), `done` (with what happened).
 */
export type DreamStage = 'reading' | 'model' | 'applying' | 'done';

export interface DreamProgress {
  pass: DreamPassName;
  stage: DreamStage;
  /** `model`: facts shown to the model. */
  facts?: number;
  /** `model`: feedback signals shown. */
  feedback?: number;
  /** `model`: conversation log entries shown. */
  entries?: number;
  /** `applying` and `done`: operations in the changeset. */
  operations?: number;
  /** `done`: operations written, and conflicts (not written). */
  applied?: number;
  conflicts?: number;
  /** `done`: the code of the error that failed the pass. */
  error?: string;
}

/** Called on every stage of a long pass; it must not throw (what it throws is ignored). */
export type DreamProgressListener = (event: DreamProgress) => void;

/** Tell the listener, never letting it break the pass. */
export function notify(listener: DreamProgressListener | undefined, event: DreamProgress): void {
  if (!listener) return;
  try {
    listener(event);
  } catch {
    // A progress display that fails must not stop a pass half-way through its writes.
  }
}
