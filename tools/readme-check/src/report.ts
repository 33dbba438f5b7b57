import type { ReadmeExample } from './examples.js';
import type { RunResult } from './run.js';

/** The longest stderr a failure quotes (its end, where the error is). */
const STDERR_TAIL = 6_000;

/**
 * Why an example's run failed, starting with its README line, or undefined when it ran: exited 0 and
 * printed something (an example prints what it computes), and the servers saw nothing wrong.
 */
export function runFailure(
  example: ReadmeExample,
  result: RunResult,
  complaints: string[] = [],
): string | undefined {
  const at = `${example.readme}:${example.line}`;
  const stderr = result.stderr.length > STDERR_TAIL ? `…${result.stderr.slice(-STDERR_TAIL)}` : result.stderr;
  if (result.timedOut)
    return `${at} was still running at the limit and was killed. It printed:\n${result.stdout}${stderr}`;
  if (result.code !== 0) {
    const how = result.code === null ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
    const hint = driftHint(result.stderr);
    return `${at} ${how}${hint ? `: ${hint}` : ''}\n${stderr}`;
  }
  if (result.stdout.trim() === '')
    return `${at} printed nothing: an example prints what it computes (console.log the result it shows).`;
  if (complaints.length > 0)
    return `${at} ran, but the test servers saw requests off their API:\n${complaints.join('\n')}`;
  return undefined;
}

/**
 * A plain statement of the usual cause when an example broke because a package's API moved (a name left
 * an entry point, an entry point went away, a package is not installed), from the error it printed or
 * the compiler's code.
 */
export function driftHint(error: string): string | undefined {
  const missing = error.match(/module '([^']+)' does not provide an export named '([^']+)'/);
  if (missing)
    return `it imports ${missing[2]} from ${missing[1]}, which no longer exports it; update the README's import (the name may have moved to another entry point, such as ${missing[1]}/store)`;
  const subpath = error.match(
    /Package subpath '([^']+)' is not defined by "exports" in \S*node_modules\/(\S+?)\/package\.json/,
  );
  if (subpath)
    return `it imports ${subpath[2]}${subpath[1]!.slice(1)}, an entry point ${subpath[2]} does not have; update the README's import`;
  const notFound = error.match(/Cannot find (?:package|module) '([^'./][^']*)'/);
  if (notFound)
    return `it imports ${notFound[1]}, which is not installed for the examples; add it to tools/readme-check's devDependencies, and to the README's install line`;
  return undefined;
}

/** The same plain statement for the compiler's errors about imports (TS2305, TS2724, TS2307). */
export function importErrorHint(code: number): string | undefined {
  if (code === 2305 || code === 2724)
    return "the README's import is out of date: the name is not exported there (it may have moved to another entry point)";
  if (code === 2307)
    return 'the README imports an entry point its package does not have, or a package tools/readme-check does not install';
  return undefined;
}
