import type { Provenance } from '../../facts/record.js';
import type { Scope } from '../../scope.js';

/** Provenance of a fact the model wrote through a tool: the assistant, in this session, with this tool. */
export function assistantProvenance(scope: Readonly<Scope>, toolName: string): Provenance {
  return {
    source: 'assistant',
    toolName,
    ...(scope.threadId === undefined ? {} : { sessionId: scope.threadId }),
  };
}
