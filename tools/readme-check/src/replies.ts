/**
 * One answer of the scripted model: a text or one tool call for a chat request, `{ "json": … }` for a request
 * that asks for an object of a JSON schema. Written above an example as
 * `<!-- readme-check model: [{ "call": "create_memory", "arguments": { "content": "…" } }, "Noted."] -->`
 * (JSON). A chat request past the script gets a short text, a structured one the schema's smallest object.
 */
export type ScriptedReply = string | { call: string; arguments: Record<string, unknown> } | { json: unknown };

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
      ('json' in r ||
        (typeof (r as { call?: unknown }).call === 'string' &&
          typeof (r as { arguments?: unknown }).arguments === 'object')));
  if (!Array.isArray(replies) || !replies.every(valid))
    throw new Error(
      `${at}: "readme-check model:" takes a JSON array of texts, { "call", "arguments" } and { "json" } objects.`,
    );
  return replies as ScriptedReply[];
}
