export { type ReadmeExample, readmeExamples } from './examples.js';
export { type SearchClaim, searchClaims } from './search-claims.js';
export { type ExampleError, typecheckExamples } from './typecheck.js';
