/**
 * The attribute names Kioku puts on spans and metrics. OpenTelemetry's own where one fits (`gen_ai.*`,
 * `error.type`), `kioku.*` for the rest.
 */
export const ATTR = Object.freeze({
  userId: 'kioku.user.id',
  agentId: 'kioku.agent.id',
  sessionId: 'kioku.session.id',
  turnIndex: 'kioku.turn.index',
  turnPhase: 'kioku.turn.phase',
  stage: 'kioku.stage',
  dropReason: 'kioku.drop.reason',
  pass: 'kioku.pass',
  storeAdapter: 'kioku.store.adapter',
  storeKind: 'kioku.store.kind',
  storeOperation: 'kioku.store.operation',
  storeRows: 'kioku.store.rows',
  leaseOutcome: 'kioku.lease.outcome',
  quarantineReason: 'kioku.quarantine.reason',
  forgetTarget: 'kioku.forget.target',
  receiptId: 'kioku.forget.receipt_id',
  errorType: 'error.type',
  genAiOperation: 'gen_ai.operation.name',
  genAiProvider: 'gen_ai.provider.name',
  genAiRequestModel: 'gen_ai.request.model',
  genAiInputTokens: 'gen_ai.usage.input_tokens',
  genAiOutputTokens: 'gen_ai.usage.output_tokens',
  genAiTokenType: 'gen_ai.token.type',
  genAiToolName: 'gen_ai.tool.name',
  genAiToolCallId: 'gen_ai.tool.call.id',
});

/** What a failure is called on a span and a metric: a KiokuError's code, else the error's class name. */
export function errorType(error: unknown): string {
  if (error && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  }
  return '_OTHER';
}
