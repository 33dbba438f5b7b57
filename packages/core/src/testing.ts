/* `@kioku/core/testing`: fakes for tests. */

export { ManualClock } from './foundation/clock.js';
