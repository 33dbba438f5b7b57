/* `@kioku/core/testing`: fakes for tests. */

export { ManualClock } from './clock.js';
