import type { Kioku, Scope } from '@kioku/core';

/*
 * `/forgotten`: forget one fact so that it stays forgotten, and review what is on the suppression list
 * (keyed hashes of forgotten facts, never their text), revoking an entry to let it be learnt again.
 */

export const FORGOTTEN_USAGE = 'Usage: /forgotten [list | fact <id> | revoke <hash>]';

export async function forgottenCommand(kioku: Kioku, scope: Scope, arg: string): Promise<string> {
  const [action = 'list', value] = arg.split(/\s+/).filter(Boolean);
  const suppressions = kioku.privacy.suppressions;
  if (action === 'list') {
    const entries = await suppressions.list(scope.userId);
    if (entries.length === 0) return 'Nothing forgotten: the suppression list is empty.';
    return [
      `${entries.length} forgotten ${entries.length === 1 ? 'fact stays' : 'facts stay'} forgotten (hashes only, no text):`,
      ...entries.map((e) => `  ${e.hash}  forgotten ${e.at}`),
    ].join('\n');
  }
  if (!value) return FORGOTTEN_USAGE;
  switch (action) {
    case 'fact': {
      const result = await kioku.privacy.forgetFact(scope, value);
      const facts = result.facts.length;
      return `Forgot ${value} (${facts} ${facts === 1 ? 'fact' : 'facts'} removed); extraction will not learn it again ("/forgotten" lists it).`;
    }
    case 'revoke':
      return (await suppressions.revoke(scope.userId, value))
        ? `Revoked ${value}: that fact may be learnt again.`
        : `No forgotten fact with hash ${value} (see "/forgotten").`;
    default:
      return FORGOTTEN_USAGE;
  }
}
