import { type ParseArgsConfig, parseArgs } from 'node:util';
import { IdSchema } from '@kioku/core/store';
import { UsageError } from './errors.js';

/** A command's option table, as node:util's parseArgs takes it. */
export type OptionTable = NonNullable<ParseArgsConfig['options']>;

/** The parsed values of an option table. */
export type OptionValues<O extends OptionTable> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>
>['values'];

/*
 * What every command's argument handling shares: parsing its options, required values, ids, output.
 */

/** Write and wait until the stream took it. */
export function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/** node:util parseArgs of a command's options, with its errors turned into short usage messages. */
export function parseCommandOptions<O extends OptionTable>(
  command: string,
  options: O,
  args: string[],
): OptionValues<O> {
  return parseCommandArgs(command, options, args, false).values;
}

/** Like parseCommandOptions, for a command that also takes words (`kioku search … "query"`). */
export function parseCommandArgs<O extends OptionTable>(
  command: string,
  options: O,
  args: string[],
  allowPositionals = true,
): { values: OptionValues<O>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals });
    return { values: values as OptionValues<O>, positionals };
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const accepted = Object.keys(options)
      .map((o) => `--${o}`)
      .join(', ');
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const option = /'([^']+)'/.exec(message)?.[1] ?? '';
      throw new UsageError(`Unknown option ${option} for "kioku ${command}"; it accepts ${accepted}.`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = /'(--?[\w-]+)/.exec(message)?.[1] ?? 'an option';
      throw new UsageError(
        /argument missing|ambiguous/.test(message)
          ? `${option} needs a value (write ${option}=<value> for a value starting with "-").`
          : `${option} takes no value.`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      const arg = /'([^']*)'/.exec(message)?.[1] ?? '';
      throw new UsageError(`Unexpected argument "${arg}" for "kioku ${command}"; options are ${accepted}.`);
    }
    throw error;
  }
}

/** An option the command cannot do without; the message shows an example. */
export function required(value: string | undefined, option: string, example: string): string {
  if (value === undefined || value.trim() === '')
    throw new UsageError(`${option} is required, e.g. ${option} ${example}.`);
  return value;
}

/** An id given on the command line (`what`: user, agent, session …), checked like every Kioku id. */
export function idOption(value: string, option: string, what: string): string {
  const result = IdSchema.safeParse(value);
  if (!result.success) {
    throw new UsageError(
      `${option} "${value}" is not a valid ${what} id: ${result.error.issues[0]?.message ?? 'invalid'}.`,
    );
  }
  return result.data;
}

/** `--user` as a user id. */
export function userId(value: string): string {
  return idOption(value, '--user', 'user');
}

/** `1 record`, `2 records`, `2 passes`. */
export function plural(n: number, word: string): string {
  if (n === 1) return `${n} ${word}`;
  return `${n} ${word}${/(s|x|z|ch|sh)$/.test(word) ? 'es' : 's'}`;
}
