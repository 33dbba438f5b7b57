import type { Scope } from '../foundation/scope.js';
import { ATTR } from '../telemetry/attributes.js';
import type { TelemetryOptions } from '../telemetry/options.js';
import { Telemetry, withTelemetry } from '../telemetry/telemetry.js';

/**
 * Runs one tool call in a span `execute_tool <tool>` (the gen_ai conventions' name) in `scope`, with
 * `gen_ai.tool.name`, the user as `telemetry.userId` says and any `attributes` given (names and ids, never
 * the arguments or the result); a result with `isError` gets `error.type=tool_error`. The store calls,
 * model calls and quarantined writes of the call nest in it.
 */
export type ToolCallTracer = <T extends { isError?: boolean | undefined }>(
  scope: Readonly<Scope>,
  tool: string,
  run: () => Promise<T>,
  attributes?: Readonly<Record<string, string>>,
) => Promise<T>;

/**
 * A span per tool call, for a server that runs Kioku's tools without a conversation (`kioku mcp`): the
 * providers of `options`, or those the OpenTelemetry SDK registered. Undefined when nothing would be
 * recorded.
 */
export function traceToolCalls(options: TelemetryOptions = {}): ToolCallTracer | undefined {
  const telemetry = Telemetry.from(options, 'traceToolCalls');
  if (!telemetry) return undefined;
  return (scope, tool, run, attributes) =>
    withTelemetry(telemetry, () =>
      telemetry.span(
        `execute_tool ${tool}`,
        {
          ...telemetry.scope(scope),
          [ATTR.genAiOperation]: 'execute_tool',
          [ATTR.genAiToolName]: tool,
          ...attributes,
        },
        async (span) => {
          const result = await run();
          if (result.isError) span?.setAttribute(ATTR.errorType, 'tool_error');
          return result;
        },
      ),
    );
}
