/**
 * The Agents SDK versions the tests run against. From 0.15 on, `@openai/agents` depends on `openai` 7,
 * which needs Node 22; so Node 20 runs 0.14 (the last on `openai` 6) and Node 22+ (CI: Node 24) runs both it and the
 * newest. Each is a vitest project in which `@openai/agents` resolves to that version (the newest is
 * installed as `openai-agents-latest`).
 */
export const AGENTS_SDK_VERSIONS = [
  { name: 'agents@0.14', minNode: 20, alias: [] },
  {
    name: 'agents@latest',
    minNode: 22,
    alias: [
      { find: /^@openai\/agents$/, replacement: 'openai-agents-latest' },
      { find: /^@openai\/agents\/(.*)$/, replacement: 'openai-agents-latest/$1' },
    ],
  },
];

/** The versions this Node runs. */
export function versionsForThisNode() {
  const major = Number(process.versions.node.split('.')[0]);
  return AGENTS_SDK_VERSIONS.filter((v) => major >= v.minNode);
}

declare module 'vitest' {
  /** The project's Agents SDK version (`agents@0.14`, `agents@latest`), for `inject('agentsSdk')`. */
  export interface ProvidedContext {
    agentsSdk: string;
  }
}
