/**
 * One answer of the scripted model to a chat request: a text, or one tool call. Written above an example as
 * `<!-- readme-check model: [{ "call": "create_memory", "arguments": { "content": "…" } }, "Noted."] -->`
 * (JSON); requests past the script get a short text, structured requests an object of their schema.
 */
export type ScriptedReply = string | { call: string; arguments: Record<string, unknown> };

export function parseReplies(json: string, at: string): ScriptedReply[] {
  let replies: unknown;
  try {
    replies = JSON.parse(json);
  } catch (error) {
    throw new Error(`${at}: the "readme-check model:" replies are not JSON (${(error as Error).message}).`);
  }
  const valid = (r: unknown) =>
    typeof r === 'string' ||
    (typeof r === 'object' &&
      r !== null &&
      typeof (r as { call?: unknown }).call === 'string' &&
      typeof (r as { arguments?: unknown }).arguments === 'object');
  if (!Array.isArray(replies) || !replies.every(valid))
    throw new Error(`${at}: "readme-check model:" takes a JSON array of texts and { "call", "arguments" } objects.`);
  return replies as ScriptedReply[];
}
