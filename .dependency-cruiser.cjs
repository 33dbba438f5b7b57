/**
 * `pnpm check:layers`: the import rules of docs/ARCHITECTURE.md §1, checked over every package's source.
 * No cycle between modules or between folders; inside @kioku/core imports only point down the layers
 * below; core imports no other package; adapters import core (through its entry points) and nothing else
 * of ours.
 */
const CORE_LAYERS = [
  'foundation',
  'telemetry',
  'tokens',
  'model',
  'search',
  'store',
  'runtime',
  'memory',
  'kioku',
];
const ADAPTERS =
  'store-json|store-sqlite|store-postgres|store-redis|store-qdrant|store-test-suite|openai|embed-local|extract|mcp|ai-sdk|openai-agents|langgraph|mastra|studio';

module.exports = {
  forbidden: [
    {
      name: 'no-module-cycle',
      comment: 'Two modules that import each other (directly or through others) cannot be understood apart.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'Two folders that import each other are one concept split in two, or two tangled ones.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    ...CORE_LAYERS.slice(0, -1).map((layer, i) => ({
      name: `core-${layer}-imports-down-only`,
      comment: `core's layers, bottom up: ${CORE_LAYERS.join(' ← ')}; ${layer}/ may import only the layers before it.`,
      severity: 'error',
      from: { path: `^packages/core/src/${layer}/` },
      to: { path: `^packages/core/src/(${CORE_LAYERS.slice(i + 1).join('|')})/` },
    })),
    {
      name: 'core-layers-never-import-entry-points',
      comment: 'The entry points (index, store, adapter, passes, model, testing) only re-export.',
      severity: 'error',
      from: { path: `^packages/core/src/(${CORE_LAYERS.join('|')})/` },
      to: { path: '^packages/core/src/[a-z]+\\.ts$' },
    },
    {
      name: 'core-is-the-bottom',
      severity: 'error',
      from: { path: '^packages/core/' },
      to: { path: '^(packages/(?!core/)|apps/|tools/)' },
    },
    {
      name: 'adapters-depend-on-core-only',
      comment:
        'An adapter imports @kioku/core and its own files, never another adapter, the CLI, apps or tools.',
      severity: 'error',
      from: { path: `^packages/(${ADAPTERS})/src/` },
      to: { path: '^(packages/|apps/|tools/)', pathNot: ['^packages/core/', '^packages/$1/'] },
    },
    {
      name: 'core-through-its-entry-points',
      comment:
        'Other packages import @kioku/core, /store, /adapter, /passes, /model or /testing, never a file inside.',
      severity: 'error',
      from: { path: '^(packages/(?!core/)|apps/|tools/)' },
      to: { path: '^packages/core/src/(?!(index|store|adapter|passes|model|testing)\\.ts$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      conditionNames: ['@kioku/source', 'import', 'types', 'default'],
      exportsFields: ['exports'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
  },
};
