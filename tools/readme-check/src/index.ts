export { checkExample } from './check.js';
export { type ReadmeExample, readmeExamples, repositoryReadmes } from './examples.js';
export { type Need, parseNeeds, SERVERS } from './needs.js';
export { driftHint, runFailure } from './report.js';
export { type RunOptions, type RunResult, runExample } from './run.js';
export { type SearchClaim, searchClaims } from './search-claims.js';
export { provideServers, ServerUnavailableError } from './servers.js';
export { type ExampleError, typecheckExamples } from './typecheck.js';
