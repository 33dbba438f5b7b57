import type { Context } from 'hono';
import type { UserDirectory } from './directory/index.js';
import { type Html, layout, type Page, type Section } from './html.js';
import { IdSchema, type Kioku, type KiokuStores, type Scope, ValidationError } from './kioku.js';
import type { TurnLedgerLog } from './ledgers.js';
import type { Receipts } from './receipts.js';

/** What every route handler works with: the stores, the facade over them and the request's page. */
export interface Studio {
  stores: KiokuStores;
  kioku: Kioku;
  directory: UserDirectory;
  ledgers: TurnLedgerLog;
  receipts: Receipts;
  /** The backend's name for receipts (`sqlite`, `postgres`, …). */
  backend: string;
  page(c: Context): Page;
}

/**
 * The scope of a user page: the user from the path, the agent from `?agent=`. Both are checked as ids
 * (VALIDATION otherwise); this is the only place a page gets its scope from.
 */
export function scopeOf(c: Context): Scope {
  const userId = id(c.req.param('user'), 'user id');
  const agent = c.req.query('agent');
  return agent === undefined || agent === '' ? { userId } : { userId, agentId: id(agent, 'agent id') };
}

export function id(value: string | undefined, what: string): string {
  const result = IdSchema.safeParse(value);
  if (!result.success) throw new ValidationError(`Not a valid ${what}: ${JSON.stringify(value ?? '')}.`);
  return result.data;
}

/** A full page: the layout around `body`, with the request's page settings. */
export function render(
  c: Context,
  studio: Studio,
  options: { title: string; scope?: Scope; section?: Section },
  body: Html | Html[],
  status: 200 | 400 | 404 = 200,
) {
  return c.html(layout(studio.page(c), options, body), status);
}
