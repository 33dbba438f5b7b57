import type { ChatModel, ChatModelRequest } from '../../src/index.js';

/**
 * A memory model for outbox tests: a batched extraction request is answered with one fact per
 * `<exchange turn="N">` shown, the user's own words with that turn (so it is grounded and recognisable);
 * a reconciliation adds every new fact. It counts the exchanges it was asked about, to check that none is
 * extracted twice. `hold`, when set, is awaited before answering (a pass still running when its process
 * dies).
 */
export function echoMemoryModel(): ChatModel & {
  exchanges: string[];
  calls: number;
  hold: Promise<void> | undefined;
} {
  const model = {
    exchanges: [] as string[],
    calls: 0,
    hold: undefined as Promise<void> | undefined,
    async complete(request: ChatModelRequest) {
      model.calls++;
      if (model.hold) await model.hold;
      request.signal?.throwIfAborted();
      const prompt = request.messages.at(-1)!.content;
      if (prompt.startsWith('New facts (')) {
        const count = Number(/^New facts \((\d+)\)/.exec(prompt)![1]);
        const decisions = Array.from({ length: count }, (_, i) => ({
          fact: i + 1,
          event: 'ADD',
          reason: 'new',
        }));
        return { role: 'assistant' as const, content: JSON.stringify({ decisions }) };
      }
      const shown = [...prompt.matchAll(/<exchange turn="(\d+)">\n<user>\n([\s\S]*?)\n<\/user>/g)];
      model.exchanges.push(...shown.map((m) => m[2]!));
      const facts = shown.map((m) => ({
        turn: Number(m[1]),
        content: m[2]!,
        category: 'personal/notes',
        tags: [],
      }));
      return { role: 'assistant' as const, content: JSON.stringify({ facts }) };
    },
  };
  return model;
}

/** Things a user says in turn `i`: distinct words, so no two are near-duplicates of each other. */
export const SAYINGS = [
  'My sister Ana lives in Porto.',
  'I play the cello every Tuesday.',
  'Our dog Biscuit is afraid of thunder.',
  'I am allergic to peanuts.',
  'Next spring we move to Lisbon.',
  'My favourite tea is genmaicha.',
  'I work as a marine biologist.',
  'The kids learn Japanese on Saturdays.',
  'I drive an old green Volvo.',
  'My grandmother turned ninety in March.',
];
