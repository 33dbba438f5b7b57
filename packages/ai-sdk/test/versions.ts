/**
 * The AI SDK majors the tests run against. AI SDK 7 (with `@ai-sdk/openai-compatible` 3) needs Node 22, so
 * Node 20 runs AI SDK 6 only and Node 22+ (CI: Node 24) runs both; each is a vitest project in which `ai` and the
 * provider resolve to that major (installed as `ai-v7` / `ai-sdk-openai-compatible-v3`).
 */
export const AI_SDK_VERSIONS = [
  { name: 'ai@6', minNode: 20, alias: [] },
  {
    name: 'ai@7',
    minNode: 22,
    alias: [
      { find: /^ai$/, replacement: 'ai-v7' },
      { find: /^ai\/(.*)$/, replacement: 'ai-v7/$1' },
      { find: /^@ai-sdk\/openai-compatible$/, replacement: 'ai-sdk-openai-compatible-v3' },
    ],
  },
];

/** The versions this Node runs. */
export function versionsForThisNode() {
  const major = Number(process.versions.node.split('.')[0]);
  return AI_SDK_VERSIONS.filter((v) => major >= v.minNode);
}

declare module 'vitest' {
  /** The project's AI SDK version (`ai@6`, `ai@7`), for `inject('aiSdk')`. */
  export interface ProvidedContext {
    aiSdk: string;
  }
}
