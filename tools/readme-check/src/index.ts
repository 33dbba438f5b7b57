export { type ReadmeExample, readmeExamples } from './examples.js';
export { type ExampleError, typecheckExamples } from './typecheck.js';
