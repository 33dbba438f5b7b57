import type { TelemetryOptions } from '@kioku/core';
import { traceStores } from '@kioku/core/store';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/index.js';
import { dropSchema, endSharedClient, freshSchema, noServer, sharedClient } from './helpers.js';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const SECRET = 'SECRET-planted-9020';
const ann = { userId: 'ann@example.com' };

/**
 * A fact written (a transaction), searched and listed (side by side) on PostgreSQL stores traced with
 * `telemetry`: the spans of the calls.
 */
async function spansOf(telemetry: Omit<TelemetryOptions, 'tracerProvider'>): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const schema = freshSchema();
  const plain = createPostgresStores({ client: sharedClient(), schema });
  try {
    await plain.setup();
    const stores = traceStores(plain, { tracerProvider, ...telemetry });
    await stores.facts.create(ann, { content: `My locker code is ${SECRET}` });
    await Promise.all([stores.facts.search(ann, { query: `locker ${SECRET}` }), stores.working.list(ann)]);
  } finally {
    await dropSchema(schema);
  }
  return exporter.getFinishedSpans();
}

describe.skipIf(noServer)('OpenTelemetry: SQL text on PostgreSQL store spans', () => {
  afterAll(endSharedClient);

  it('is not there by default', async () => {
    const spans = await spansOf({ detail: 'store' });
    expect(spans.map((s) => s.name).sort()).toEqual(['create facts', 'list working', 'search facts']);
    for (const span of spans) expect(span.attributes['db.query.text']).toBeUndefined();
  });

  it('with queryText: each call its own statements, with placeholders, never the bound values', async () => {
    const spans = await spansOf({ detail: 'store', queryText: true });
    const text = (name: string) => String(spans.find((s) => s.name === name)!.attributes['db.query.text']);
    // The create runs in a transaction: its statements are reported from the transaction's client.
    expect(text('create facts')).toMatch(/insert into "t_[0-9a-f]+"\."facts"/);
    expect(text('create facts')).toContain('$1');
    // Two calls at once: each span has its own statements, not the other's.
    expect(text('search facts')).toMatch(/fact_revision/);
    expect(text('search facts')).not.toMatch(/working_entries/);
    expect(text('list working')).toMatch(/working_entries/);
    expect(text('list working')).not.toMatch(/fact_revision/);
    const all = spans.map((s) => String(s.attributes['db.query.text'])).join('\n');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain('locker');
    expect(all).not.toContain(ann.userId);
  });
});
