/*
 * OpenTelemetry for the long-running commands (`kioku worker`, `kioku mcp`): when the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT`) is set,
 * the OpenTelemetry SDK is loaded (only then: the packages are imported lazily) and registered globally,
 * so the Kioku these commands build finds it; spans and metrics go out as OTLP over HTTP (JSON), in
 * batches. `OTEL_SERVICE_NAME` names the service (default: the command). Without the variables nothing is
 * loaded and Kioku records nothing.
 */

/** What a command does when it stops: flush what is still buffered and stop the exporters. */
export interface TelemetryHandle {
  readonly endpoint: string;
  shutdown(): Promise<void>;
}

/** Metrics are exported this often (and once more at shutdown). */
const METRIC_INTERVAL_MS = 15_000;

/** Start exporting when the environment asks for it; undefined when it does not. */
export async function startTelemetry(
  service: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TelemetryHandle | undefined> {
  const endpoint =
    env.OTEL_EXPORTER_OTLP_ENDPOINT ||
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED === 'true') return undefined;
  const [
    api,
    { AsyncLocalStorageContextManager },
    resources,
    traces,
    sdkMetrics,
    { OTLPTraceExporter },
    { OTLPMetricExporter },
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
  ]);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || service }));
  // The exporters read the endpoint, headers and timeouts from the same environment variables.
  const tracerProvider = new traces.BasicTracerProvider({
    resource,
    spanProcessors: [new traces.BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const meterProvider = new sdkMetrics.MeterProvider({
    resource,
    readers: [
      new sdkMetrics.PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter(),
        exportIntervalMillis: METRIC_INTERVAL_MS,
      }),
    ],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.trace.setGlobalTracerProvider(tracerProvider);
  api.metrics.setGlobalMeterProvider(meterProvider);
  return {
    endpoint,
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
