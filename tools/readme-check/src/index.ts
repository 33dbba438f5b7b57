export { checkExample, EXAMPLE_LIMIT_MS } from './check.js';
export { type ReadmeExample, readmeExamples, repositoryReadmes } from './examples.js';
export { type Need, parseNeeds } from './needs.js';
export { driftHint, importErrorHint } from './report.js';
export { type RunOptions, type RunResult, runExample } from './run.js';
export { type SearchClaim, searchClaims } from './search-claims.js';
export { PG_URL, provideServers, REDIS_URL, ServerUnavailableError } from './servers.js';
export { type ExampleError, typecheckExamples } from './typecheck.js';
