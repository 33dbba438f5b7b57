import { createInMemoryStores, KiokuBuilder } from '@kioku/core';
import { ScriptedModel } from '@kioku/core/testing';
import { describe, expect, it } from 'vitest';
import { forgottenCommand } from '../src/forgotten.js';

describe('/forgotten', () => {
  it('forgets a fact so that it stays forgotten, lists its hash (not its text) and revokes it', async () => {
    const stores = createInMemoryStores();
    const kioku = new KiokuBuilder({ stores, model: new ScriptedModel([]) }).withFacts().build();
    const scope = { userId: 'alice' };
    const fact = await stores.facts.create(scope, { content: 'The staging vault passphrase is heron-7731' });

    expect(await forgottenCommand(kioku, scope, '')).toBe(
      'Nothing forgotten: the suppression list is empty.',
    );
    expect(await forgottenCommand(kioku, scope, `fact ${fact.id}`)).toContain(
      `Forgot ${fact.id} (1 fact removed)`,
    );
    expect(await stores.facts.get(scope, fact.id)).toBeNull();

    const listed = await forgottenCommand(kioku, scope, 'list');
    expect(listed).toMatch(/^1 forgotten fact stays forgotten/);
    expect(listed).not.toContain('heron');
    const [entry] = await kioku.privacy.suppressions.list('alice');
    expect(listed).toContain(entry!.hash);
    expect(
      await kioku.privacy.suppressions.matches('alice', ['staging vault passphrase: heron-7731']),
    ).toEqual([true]);

    expect(await forgottenCommand(kioku, scope, `revoke ${entry!.hash}`)).toContain('may be learnt again');
    expect(await kioku.privacy.suppressions.list('alice')).toEqual([]);
    expect(await forgottenCommand(kioku, scope, `revoke ${entry!.hash}`)).toContain(
      'No forgotten fact with hash',
    );
    expect(await forgottenCommand(kioku, scope, 'fact')).toBe(
      'Usage: /forgotten [list | fact <id> | revoke <hash>]',
    );
  });
});
