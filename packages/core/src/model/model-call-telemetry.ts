import { type Attributes, SpanKind } from '@opentelemetry/api';
import { ATTR } from '../telemetry/attributes.js';
import { activeTelemetry, secondsSince, type Telemetry } from '../telemetry/telemetry.js';
import type { ChatModel, ModelUsage } from './chat-model.js';

/**
 * One model call as OpenTelemetry's `gen_ai` conventions describe it: a client span `chat <model>` with
 * the model, provider and tokens (`gen_ai.usage.*`), and the `gen_ai.client.operation.duration` and
 * `gen_ai.client.token.usage` metrics, each with `kioku.pass` (which pass called: `turn` for the
 * conversation's own model, else the pass's label: `extraction`, `enrichment`, `dream`, …). `usageOf`
 * reads the tokens from the result (counted by Kioku when the model reports none: `kioku.usage.estimated`).
 */
export function observeModelCall<T>(
  model: ChatModel,
  pass: string,
  call: () => Promise<T>,
  usageOf: (result: T) => ModelUsage | undefined,
  telemetry: Telemetry | undefined = activeTelemetry(),
): Promise<T> {
  if (!telemetry) return call();
  const attributes: Attributes = { [ATTR.genAiOperation]: 'chat', [ATTR.pass]: pass };
  if (model.provider !== undefined) attributes[ATTR.genAiProvider] = model.provider;
  if (model.modelId !== undefined) attributes[ATTR.genAiRequestModel] = model.modelId;
  const start = performance.now();
  let usage: ModelUsage | undefined;
  return telemetry.span(
    `chat ${model.modelId ?? 'model'}`,
    attributes,
    async (span) => {
      const result = await call();
      usage = usageOf(result);
      if (usage) {
        span?.setAttributes({
          [ATTR.genAiInputTokens]: usage.inputTokens,
          [ATTR.genAiOutputTokens]: usage.outputTokens,
          ...(usage.estimated ? { 'kioku.usage.estimated': true } : {}),
        });
      }
      return result;
    },
    {
      kind: SpanKind.CLIENT,
      ended: (failure) => {
        const instruments = telemetry.metrics;
        if (!instruments) return;
        const base = failure ? { ...attributes, [ATTR.errorType]: failure } : attributes;
        instruments.modelDuration.record(secondsSince(start), base);
        if (usage) {
          instruments.modelTokens.record(usage.inputTokens, { ...base, [ATTR.genAiTokenType]: 'input' });
          instruments.modelTokens.record(usage.outputTokens, { ...base, [ATTR.genAiTokenType]: 'output' });
        }
      },
    },
  );
}
