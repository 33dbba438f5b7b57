import { ConflictError, isKiokuError, NotFoundError } from '../../foundation/errors.js';
import type { ToolContext } from '../../model/tool.js';
import type { Fact, FactPatch } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { markUntrusted } from '../trust/quarantine.js';
import { assistantProvenance } from './provenance.js';

/*
 * The model edits facts it was shown (a memory block, a search result). Its edit is checked against the
 * version it saw: a fact changed since — by another app instance, a background pass, the user — is not
 * overwritten; the model is told what the fact says now and may retry.
 */

/**
 * `update` checked against the version the model saw; CONFLICT names the fact's current text. New text
 * that reads like instructions puts the fact in quarantine (its provenance becomes this tool's).
 */
export async function updateSeenFact(
  store: FactStore,
  context: ToolContext,
  id: string,
  patch: FactPatch,
  toolName: string,
): Promise<Fact> {
  const expectedVersion = context.seen?.versionOf(id);
  const text = [patch.title, patch.content].filter((t) => typeof t === 'string').join(': ');
  const provenance = markUntrusted(
    assistantProvenance(context.scope, toolName),
    text,
    context.userMessage !== undefined ? { userText: context.userMessage } : {},
  );
  if (provenance.quarantine) patch = { ...patch, provenance };
  try {
    const fact = await store.update(
      context.scope,
      id,
      patch,
      expectedVersion === undefined ? undefined : { expectedVersion },
    );
    context.seen?.note(fact);
    return fact;
  } catch (error) {
    throw await explainConflict(store, context, id, error, toolName);
  }
}

/** `delete` checked against the version the model saw; NotFoundError when there is no such memory. */
export async function deleteSeenFact(
  store: FactStore,
  context: ToolContext,
  id: string,
  toolName: string,
): Promise<void> {
  const expectedVersion = context.seen?.versionOf(id);
  try {
    const deleted = await store.delete(
      context.scope,
      id,
      expectedVersion === undefined ? undefined : { expectedVersion },
    );
    if (!deleted) throw new NotFoundError(`No memory "${id}".`);
    context.seen?.forget(id);
  } catch (error) {
    throw await explainConflict(store, context, id, error, toolName);
  }
}

async function explainConflict(
  store: FactStore,
  context: ToolContext,
  id: string,
  error: unknown,
  toolName: string,
): Promise<unknown> {
  if (!isKiokuError(error) || error.code !== 'CONFLICT') return error;
  const current = await store.get(context.scope, id);
  if (!current) return new NotFoundError(`Memory "${id}" was deleted since you saw it.`);
  // The model now knows the current text: a retry is checked against this version.
  context.seen?.note(current);
  const text = current.title === undefined ? current.content : `${current.title}: ${current.content}`;
  return new ConflictError(
    `Memory "${id}" changed since you saw it; it now reads: ${JSON.stringify(text)}. ` +
      `If your change still applies, call ${toolName} again.`,
    { details: { id, version: current.version, content: current.content } },
  );
}
