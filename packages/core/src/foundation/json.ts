/** `JSON.parse(text)`, or undefined when the text is not JSON (the caller's schema check then fails). */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
