import type { Attributes } from '@opentelemetry/api';
import { inPass } from '../../telemetry/telemetry.js';
import type { Changeset } from './changeset.js';
import type { PassResult } from './changeset-log.js';

/** What a pass's changeset did, as span attributes: ids, counts and tokens (never the records' text). */
export function changesetAttributes(changeset: Changeset, result?: PassResult['result']): Attributes {
  return {
    'kioku.changeset.id': changeset.id,
    'kioku.changeset.operations': changeset.operations.length,
    ...(result
      ? {
          'kioku.changeset.applied': result.applied.length,
          'kioku.changeset.conflicts': result.conflicts.length,
        }
      : {}),
    ...(changeset.usage
      ? {
          'gen_ai.usage.input_tokens': changeset.usage.inputTokens,
          'gen_ai.usage.output_tokens': changeset.usage.outputTokens,
        }
      : {}),
  };
}

/**
 * A pass that returns a changeset, in its span (`kioku.pass <pass>`, see `inPass`) with what the changeset
 * did as attributes; just `run` when telemetry is off. `attributes` is called only when it is on.
 */
export function changesetPass(
  pass: string,
  attributes: () => Attributes,
  run: () => Promise<PassResult>,
): Promise<PassResult> {
  return inPass(pass, attributes, async (span) => {
    const done = await run();
    span?.setAttributes(changesetAttributes(done.changeset, done.result));
    return done;
  });
}
