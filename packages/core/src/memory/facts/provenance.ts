import type { Scope } from '../../foundation/scope.js';
import type { Provenance } from '../../store/facts/record.js';

/** Provenance of a fact the model wrote through a tool: the assistant, in this session, with this tool. */
export function assistantProvenance(scope: Readonly<Scope>, toolName: string): Provenance {
  return {
    source: 'assistant',
    toolName,
    ...(scope.threadId === undefined ? {} : { sessionId: scope.threadId }),
  };
}
