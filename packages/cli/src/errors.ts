import { isKiokuError } from '@kioku/core';

/** A mistake in how the command was called (exit code 2). Its message says what to type instead. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Exit codes: 0 done, 1 the operation failed (a KiokuError or an I/O error), 2 bad arguments, 3
 * `reembed --check` found vectors of another embedding model.
 */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_MISMATCH = 3;

/** The innermost message of an error's `cause` chain when it adds something the message does not say. */
function causeMessage(error: Error): string | undefined {
  let cause = error.cause;
  let last: string | undefined;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++, cause = cause.cause) last = cause.message;
  return last && !error.message.includes(last) ? last : undefined;
}

/**
 * One or two lines for the terminal, never a stack trace: `CODE: message` for Kioku errors (the stable
 * code users can search for), the message for usage and system errors. Set `KIOKU_DEBUG=1` for the stack.
 */
export function formatError(error: unknown): { text: string; exitCode: number } {
  if (error instanceof UsageError) {
    return { text: `kioku: ${error.message}\nRun "kioku --help" for usage.`, exitCode: EXIT_USAGE };
  }
  if (isKiokuError(error)) {
    const cause = causeMessage(error);
    return {
      text: `kioku: ${error.code}: ${error.message}${cause ? `\n  cause: ${cause}` : ''}`,
      exitCode: EXIT_FAILURE,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { text: `kioku: ${message}`, exitCode: EXIT_FAILURE };
}
