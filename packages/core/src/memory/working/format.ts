import type { WorkingEntryInfo } from '../../store/working/record.js';

export const OWN_INVENTORY_HEADER =
  'Working memory (scratch space — use search_working_memory or get_from_working_memory to retrieve):';
export const PATROL_FINDINGS_HEADER =
  'Patrol findings in working memory (use get_from_working_memory with the full key to read):';

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * Time left, printed as `45s`, `4m32s`, `2m01s`, `4h12m`, and `3d04h` past a day (TTLs go up
 * to 30 days). Rounded up to the second, so a live entry never shows `0s`.
 */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (days > 0) return `${days}d${pad(hours)}h`;
  if (hours > 0) return `${hours}h${pad(minutes)}m`;
  if (minutes > 0) return `${minutes}m${pad(seconds)}s`;
  return `${seconds}s`;
}

/** `- {key}: expires in 4m32s, category: email, tags: inbox, unread` — never the value. */
export function inventoryLine(entry: WorkingEntryInfo, now: number): string {
  let line = `- ${entry.key}: expires in ${formatRemaining(Date.parse(entry.expiresAt) - now)}`;
  if (entry.category) line += `, category: ${entry.category}`;
  if (entry.tags.length > 0) line += `, tags: ${entry.tags.join(', ')}`;
  return line;
}

export function renderInventory(header: string, lines: readonly string[]): string {
  return [header, ...lines].join('\n');
}
