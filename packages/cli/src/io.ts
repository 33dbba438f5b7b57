import type { Clock } from '@kioku/core';

/** Where the commands read and write; the process's streams unless a test passes its own. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Time source for the stores (tests pin it); the system clock by default. */
  clock?: Clock;
}
