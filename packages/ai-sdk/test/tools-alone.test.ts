import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { kiokuTools, type MessageLike, toChatMessages } from '../src/index.js';
import { callTools, memoryStack, reply, scriptedModel } from './support/scripted.js';

describe('Kioku’s tools without the middleware', () => {
  it('run in the conversation’s scope, and the app records the turn itself', async () => {
    const { stores, kioku } = memoryStack();
    const conversation = await kioku.startConversation({ userId: 'alice' });
    const mock = scriptedModel([
      callTools({
        id: 'call_1',
        name: 'create_memory',
        input: { title: 'Pet', content: 'Has a cat named Miso' },
      }),
      reply('I will remember Miso.'),
    ]);

    const question = 'My cat is called Miso.';
    const result = await generateText({
      model: mock,
      tools: kiokuTools(conversation),
      system: 'The app’s own prompt.',
      prompt: question,
      stopWhen: stepCountIs(3),
    });
    // Every step's messages: `responseMessages` in AI SDK 7, `response.messages` in AI SDK 6.
    const produced =
      (result as { responseMessages?: MessageLike[] }).responseMessages ?? result.response.messages;
    await conversation.record([{ role: 'user', content: question }, ...toChatMessages(produced)]);

    // No middleware: the prompt is the app's own.
    expect(mock.doGenerateCalls[0]!.prompt[0]).toEqual({ role: 'system', content: 'The app’s own prompt.' });
    expect((await stores.facts.list({ userId: 'alice' })).map((f) => f.content)).toEqual([
      'Has a cat named Miso',
    ]);
    expect(await stores.facts.list({ userId: 'bob' })).toEqual([]);
    const transcript = await stores.sessions.transcriptReadLast(
      { userId: 'alice' },
      conversation.sessionId,
      10,
    );
    expect(transcript.map((t) => t.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(transcript[2]).toMatchObject({ toolCallId: 'call_1', name: 'create_memory' });
    expect(transcript[2]!.content).toMatch(/^Created memory/);
  });
});
