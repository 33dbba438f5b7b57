import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { KiokuBuilder } from '@kioku/core';
import { ScriptedModel } from '@kioku/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores } from '../src/index.js';
import { saying, userOf } from './fixtures/sayings.js';
import { tempDir } from './helpers.js';
import { echoModelServer, startWorker } from './worker.harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface OtlpSpan {
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** A local OTLP/HTTP receiver (JSON, what `@opentelemetry/exporter-*-otlp-http` sends): the bodies by path. */
async function otlpReceiver() {
  const bodies: { path: string; body: Record<string, unknown> }[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    bodies.push({ path: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { endpoint: `http://127.0.0.1:${port}`, bodies, close };
}

function spansOf(bodies: { path: string; body: Record<string, unknown> }[]) {
  type Rs = { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] };
  return bodies
    .filter((b) => b.path === '/v1/traces')
    .flatMap((b) =>
      (b.body.resourceSpans as Rs[]).flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ span, resource: rs.resource }))),
      ),
    );
}

const attr = (attributes: OtlpSpan['attributes'], key: string) => {
  const value = attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

describe('kioku worker with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports the batch, the extraction passes and their model calls over OTLP/HTTP', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const spec = `sqlite:${path.join(dir, 'kioku.db')}`;
    const stores = await openStores(spec);
    const app = new KiokuBuilder({ stores, model: new ScriptedModel() })
      .withExtraction({ trigger: { turns: 100, idleMs: false }, recover: false })
      .build();
    for (let u = 0; u < 2; u++) {
      const convo = await app.startConversation({ userId: userOf(u) });
      for (let t = 0; t < 2; t++) await convo.run(saying(u, t), new ScriptedModel(['Noted.']));
    }
    await stores.close();
    const { server, env } = await echoModelServer();
    cleanups.push(server.close);
    const receiver = await otlpReceiver();
    cleanups.push(receiver.close);

    const worker = startWorker(
      spec,
      {
        ...env,
        OPENAI_MODEL: 'echo-memory-1',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: 'kioku-worker-e2e',
      },
      ['--once'],
    );
    cleanups.push(async () => void worker.child.kill('SIGKILL'));
    expect(await worker.exited, worker.stderr()).toBe(0);
    expect(worker.stdout()).toContain(`exporting OpenTelemetry traces and metrics to ${receiver.endpoint}`);

    const spans = spansOf(receiver.bodies);
    const names = spans.map((s) => s.span.name);
    expect(names).toContain('kioku.worker.batch');
    expect(names.filter((n) => n === 'kioku.worker.user')).toHaveLength(2);
    const passes = spans.filter((s) => s.span.name === 'kioku.pass extraction');
    expect(passes).toHaveLength(2);
    for (const { span } of passes) expect(attr(span.attributes, 'kioku.pass.turns')).toBe(2);
    const calls = spans.filter((s) => s.span.name === 'chat echo-memory-1');
    expect(calls).toHaveLength(2);
    for (const { span } of calls) {
      expect(attr(span.attributes, 'gen_ai.provider.name')).toBe('openai');
      expect(attr(span.attributes, 'kioku.pass')).toBe('extraction');
      expect(Number(attr(span.attributes, 'gen_ai.usage.input_tokens'))).toBeGreaterThan(0);
    }
    // The default detail: no span per store call.
    expect(spans.some((s) => attr(s.span.attributes, 'kioku.store.adapter') !== undefined)).toBe(false);
    expect(attr(spans[0]!.resource.attributes, 'service.name')).toBe('kioku-worker-e2e');
    // Metrics too, flushed at shutdown.
    const metrics = JSON.stringify(receiver.bodies.filter((b) => b.path === '/v1/metrics'));
    expect(metrics).toContain('kioku.worker.batches');
    expect(metrics).toContain('gen_ai.client.token.usage');
    // Private by default: what the users said is in no span.
    expect(JSON.stringify(spans)).not.toContain('Porto');
  });
});
