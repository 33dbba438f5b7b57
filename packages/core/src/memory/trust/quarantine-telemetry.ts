import { trace } from '@opentelemetry/api';
import { ATTR } from '../../telemetry/attributes.js';
import { activeTelemetry } from '../../telemetry/telemetry.js';
import type { RuleHit } from './detector.js';

/**
 * A write marked as quarantined, for telemetry: `kioku.quarantine.writes` by the strongest rule that
 * flagged it (the reason) and the write's source, and an event on the span it happened in. The evidence
 * (the flagged text) is never an attribute.
 */
export function noteQuarantined(source: string, hits: readonly RuleHit[]): void {
  const telemetry = activeTelemetry();
  if (!telemetry) return;
  let strongest = hits[0];
  for (const hit of hits) if (strongest && hit.weight > strongest.weight) strongest = hit;
  const attributes = {
    [ATTR.quarantineReason]: strongest?.rule ?? 'unknown',
    'kioku.provenance.source': source,
  };
  telemetry.metrics?.quarantinedWrites.add(1, attributes);
  if (telemetry.tracer) trace.getActiveSpan()?.addEvent('kioku.quarantined', attributes);
}
