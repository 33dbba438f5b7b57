import { readFile, writeFile } from 'node:fs/promises';
import { formatReceipt } from '@kioku/cli';
import type { ChatMessage, DroppedItem, Kioku, RecallDecision, Scope, TurnLedger } from '@kioku/core';
import { formatMemoryRef } from '@kioku/core/adapter';
import { type DemoStores, KINDS } from './stack.js';

const STATUS_MARK: Record<string, string> = {
  pending: '○',
  in_progress: '◐',
  completed: '●',
  blocked: '⊘',
  skipped: '⊖',
};

export async function showFacts(stores: DemoStores, scope: Scope): Promise<string> {
  const facts = await stores.facts.list(scope);
  if (facts.length === 0) return 'No facts remembered yet.';
  return facts
    .map((f) => `  [${f.id}] (${f.category})${f.title ? ` ${f.title}:` : ''} ${f.content}`)
    .join('\n');
}

export async function showPlan(stores: DemoStores, scope: Scope, threadId: string): Promise<string> {
  const plan = await stores.plans.get({ ...scope, threadId });
  if (!plan) return 'No plan in this conversation.';
  const steps = plan.steps.map(
    (s) => `  ${STATUS_MARK[s.status] ?? '?'} ${s.id}. ${s.description}${s.notes ? ` — ${s.notes}` : ''}`,
  );
  return [`Plan: ${plan.goal}${plan.completedAt ? ' (completed)' : ''}`, ...steps].join('\n');
}

export async function showWorking(stores: DemoStores, scope: Scope): Promise<string> {
  const entries = await stores.working.list(scope);
  if (entries.length === 0) return 'Working memory is empty (entries expire).';
  return entries.map((e) => `  ${e.key} (expires ${e.expiresAt})`).join('\n');
}

export async function showRefs(stores: DemoStores, scope: Scope): Promise<string> {
  const details = await stores.details.list(scope);
  if (details.length === 0) return 'No offloaded details yet.';
  return details
    .map(
      (d) =>
        `  ${formatMemoryRef({ id: d.id, description: d.description, tokens: d.tokenCount })}` +
        (d.summary ? `\n    ${d.summary.replace(/\s+/g, ' ').slice(0, 140)}` : ''),
    )
    .join('\n');
}

/** Items dropped, by reason: a group entry counts as the items it stands for ("4,924 budget, 3 duplicate"). */
export function droppedByReason(dropped: readonly DroppedItem[]): string {
  const counts = new Map<string, number>();
  for (const item of dropped) counts.set(item.reason, (counts.get(item.reason) ?? 0) + (item.count ?? 1));
  return [...counts].map(([reason, n]) => `${n.toLocaleString('en-US')} ${reason}`).join(', ');
}

/**
 * The turn's recall decision in one line: whether recall ran, why, and who decided (a classifier that fell
 * back says so; so does a model that asked memory itself after recall was skipped).
 */
export function formatRecall(recall: RecallDecision): string {
  const who =
    recall.fallback !== undefined
      ? `${recall.by}; ${recall.fallback.from} failed: ${recall.fallback.code}`
      : recall.by;
  const forced = recall.forcedBy ? ` — the model searched memory itself (${recall.forcedBy.tool})` : '';
  return `recall ${recall.recall ? 'ran' : 'skipped'} (${recall.mode}, ${who}): ${recall.reason}${forced}`;
}

/** The ledger as one line per middleware: tokens injected, items included, items dropped and why. */
export function formatLedger(ledger: TurnLedger | undefined): string {
  if (!ledger) return 'No turn yet.';
  const rows = ledger.entries.map(
    (e) =>
      `  ${e.middleware.padEnd(20)} ${String(e.tokens).padStart(6)} tokens  ${e.included} included` +
      (e.includedIds?.length ? ` (${e.includedIds.join(', ')})` : '') +
      (e.dropped.length > 0 ? `, dropped: ${droppedByReason(e.dropped)}` : '') +
      (e.notes?.length ? ` — ${e.notes.join('; ')}` : ''),
  );
  return [
    `  ${formatRecall(ledger.recall)}`,
    `  ${'system + user'.padEnd(20)} ${String(ledger.baseTokens).padStart(6)} tokens`,
    `  ${'tool definitions'.padEnd(20)} ${String(ledger.tools.tokens).padStart(6)} tokens  ${ledger.tools.definitions} tools`,
    ...rows,
    `  ${'total'.padEnd(20)} ${String(ledger.totalTokens).padStart(6)} of ${ledger.maxTokens} (${ledger.tokenizer})`,
  ].join('\n');
}

/** One line: what each memory kind put into the prompt this turn. */
export function ledgerLine(ledger: TurnLedger): string {
  const parts = ledger.entries.map(
    (e) => `${e.middleware} ${e.tokens}${e.included ? ` (${e.included})` : ''}`,
  );
  const recall = ledger.recall.recall ? '' : ' · recall skipped';
  return `injected: ${parts.join(' · ')} — prompt ${ledger.totalTokens} tokens${recall}`;
}

/** Tool calls and their results as the turn recorded them. */
export function describeToolTraffic(messages: readonly ChatMessage[]): string[] {
  const lines: string[] = [];
  for (const m of messages) {
    for (const call of m.toolCalls ?? []) lines.push(`  ⚙ ${call.name}(${preview(call.arguments, 80)})`);
    if (m.role === 'tool') lines.push(`    → ${preview(m.content, 160)}`);
  }
  return lines;
}

function preview(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const EXPORT_FORMAT = 'kioku.demo-export';

/** Every kind's snapshot of the user, in one file. */
export async function exportUser(stores: DemoStores, userId: string, file: string): Promise<string> {
  const snapshots = Object.fromEntries(
    await Promise.all(KINDS.map(async (kind) => [kind, await stores[kind].snapshot({ userId })] as const)),
  );
  await writeFile(file, `${JSON.stringify({ format: EXPORT_FORMAT, userId, snapshots }, null, 2)}\n`);
  const counts = Object.entries(snapshots).map(([k, s]) => `${k} ${s.records.length}`);
  return `Exported ${counts.join(', ')} to ${file} (import it with /import ${file}).`;
}

/** Restore a file written by /export; records of another user are refused (ScopeError). */
export async function importUser(stores: DemoStores, userId: string, file: string): Promise<string> {
  const data = JSON.parse(await readFile(file, 'utf8')) as {
    format?: string;
    snapshots?: Partial<Record<keyof DemoStores, unknown>>;
  };
  if (data.format !== EXPORT_FORMAT || !data.snapshots) throw new Error(`${file} is not a /export file.`);
  const done: string[] = [];
  for (const kind of KINDS) {
    const snapshot = data.snapshots[kind];
    if (snapshot === undefined) continue;
    const report = await stores[kind].restore(snapshot, { userId });
    done.push(`${kind} ${report.records}`);
  }
  return `Imported ${done.join(', ')} from ${file}.`;
}

/** "1 fact", "3 facts", "0 working entries". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/**
 * Erase everything of the user — every kind, every agent, the vectors, Kioku's own sessions — with core's
 * `forgetUser` (after the background work queued so far), and show the erasure receipt.
 */
export async function forgetUser(kioku: Kioku, userId: string): Promise<string> {
  return formatReceipt(await kioku.privacy.forgetUser(userId));
}
