const MAX_DESCRIPTION_CHARS = 120;
const MAX_VALUE_CHARS = 40;

/** One line, no brackets (they would end the placeholder early), at most `max` characters. */
function clean(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').replace(/\[/g, '(').replace(/\]/g, ')').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

function argumentsPreview(args: string): string {
  let parsed: unknown;
  try {
    parsed = args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    return clean(args, MAX_VALUE_CHARS);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return clean(JSON.stringify(parsed), MAX_VALUE_CHARS);
  }
  return Object.entries(parsed)
    .map(
      ([key, value]) =>
        `${key}: ${clean(typeof value === 'string' ? value : JSON.stringify(value), MAX_VALUE_CHARS)}`,
    )
    .join(', ');
}

/**
 * The placeholder's brief description: the tool and what it was asked, e.g.
 * `run_command output (cmd: npm install)`.
 */
export function describeToolOutput(toolName: string, args: string): string {
  const preview = argumentsPreview(args);
  return clean(preview ? `${toolName} output (${preview})` : `${toolName} output`, MAX_DESCRIPTION_CHARS);
}
