import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStores } from '../src/index.js';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const SECRET = 'SECRET-planted-9020';
const ann = { userId: 'ann@example.com' };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fact written and searched on SQLite stores traced with `telemetry`: the spans of the calls. */
async function spansOf(telemetry: Omit<TelemetryOptions, 'tracerProvider'>): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-otel-'));
  dirs.push(dir);
  const plain = createSqliteStores({ file: path.join(dir, 'kioku.db') });
  await plain.setup();
  const stores = traceStores(plain, { tracerProvider, ...telemetry });
  await stores.facts.create(ann, { content: `My locker code is ${SECRET}` });
  await stores.facts.search(ann, { query: `locker ${SECRET}` });
  await stores.close();
  return exporter.getFinishedSpans();
}

describe('OpenTelemetry: SQL text on store spans', () => {
  it('is not there by default', async () => {
    const spans = await spansOf({ detail: 'store' });
    expect(spans.map((s) => s.name)).toEqual(['create facts', 'search facts']);
    for (const span of spans) expect(span.attributes['db.query.text']).toBeUndefined();
  });

  it('with queryText: the statements with their placeholders, never the bound values', async () => {
    const spans = await spansOf({ detail: 'store', queryText: true });
    const create = spans.find((s) => s.name === 'create facts')!;
    const text = String(create.attributes['db.query.text']);
    expect(text).toMatch(/INSERT/);
    expect(text).toContain('?');
    expect(String(spans.find((s) => s.name === 'search facts')!.attributes['db.query.text'])).toMatch(
      /SELECT/,
    );
    const all = spans.map((s) => String(s.attributes['db.query.text'])).join('\n');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain('locker');
    expect(all).not.toContain(ann.userId);
  });
});
