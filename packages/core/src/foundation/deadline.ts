/** The error a call gets when it does not finish in time; `code` is `TIMEOUT`. */
export class DeadlineError extends Error {
  readonly code = 'TIMEOUT';
}

/**
 * Run `task` with a signal that aborts when `signal` does or after `ms`, and stop waiting at that moment
 * even if the task ignores its signal: the promise rejects with a `DeadlineError` (or `signal`'s reason).
 */
export async function withDeadline<T>(
  ms: number,
  signal: AbortSignal | undefined,
  task: (signal: AbortSignal) => Promise<T>,
  what = 'The call',
): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new DeadlineError(`${what} did not finish within ${ms} ms.`);
      controller.abort(error);
      reject(error);
    }, ms);
    onAbort = () => {
      controller.abort(signal?.reason);
      reject(signal?.reason);
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  stop.catch(() => {});
  try {
    return await Promise.race([task(controller.signal), stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
