/* `@kioku/core/testing`: fakes for tests — a clock you move by hand and a model that answers from a script. */

export { ManualClock } from './foundation/clock.js';
export { ScriptedModel, type ScriptedReply } from './model/scripted-model.js';
