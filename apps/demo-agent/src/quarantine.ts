import type { Kioku, Scope } from '@kioku/core';
import { explainMark, sourceLabel } from '@kioku/core/passes';

/*
 * `/quarantine`: memories a tool, a web page or a model pass wrote that read like instructions to the
 * model. They are never recalled until the user confirms one; a confirmation can be undone.
 */

export const QUARANTINE_USAGE = 'Usage: /quarantine [list | confirm <id> | undo <id> | drop <id>]';

export async function quarantineCommand(kioku: Kioku, scope: Scope, arg: string): Promise<string> {
  const [action = 'list', id] = arg.split(/\s+/).filter(Boolean);
  if (action === 'list') {
    const held = await kioku.quarantine.list(scope);
    if (held.length === 0) return 'Nothing in quarantine.';
    return held
      .map((fact) => {
        const why = explainMark(fact.provenance.quarantine!);
        return `[${fact.id}] (${sourceLabel(fact.provenance)}) ${JSON.stringify(fact.content)}\n    ${why}`;
      })
      .join('\n');
  }
  if (!id) return QUARANTINE_USAGE;
  switch (action) {
    case 'confirm':
      await kioku.quarantine.confirm(scope, id);
      return `Confirmed ${id}: it is recalled like any other memory now ("/quarantine undo ${id}" puts it back).`;
    case 'undo':
      await kioku.quarantine.requarantine(scope, id);
      return `${id} is in quarantine again.`;
    case 'drop': {
      const fact = await kioku.quarantine.drop(scope, id);
      return `Dropped ${id}: ${JSON.stringify(fact.content)}`;
    }
    default:
      return QUARANTINE_USAGE;
  }
}
