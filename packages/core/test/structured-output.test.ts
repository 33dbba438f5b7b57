import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ChatMessage,
  type ChatModel,
  type ChatModelReply,
  defaultTokenizer,
  isKiokuError,
  StructuredOutputError,
} from '../src/index.js';
import type { JsonCompletionRequest } from '../src/model/chat-model.js';
import { countMessagesTokens } from '../src/model/messages.js';
import { extractJson, generateObject, UsageLedger } from '../src/model/structured.js';

const Facts = z.object({
  facts: z.array(z.object({ content: z.string().min(1), category: z.string() })).max(5),
});

const valid = { facts: [{ content: 'Vegetarian', category: 'user-preferences/food' }] };

/** A model that replays scripted replies (text, or text with usage) and records the prompts it saw. */
function scripted(replies: (string | ChatModelReply)[]): ChatModel & { prompts: ChatMessage[][] } {
  const prompts: ChatMessage[][] = [];
  return {
    prompts,
    async complete({ messages, tools }) {
      expect(tools).toEqual([]);
      prompts.push(messages.map((m) => ({ ...m })));
      const reply = replies.shift();
      if (reply === undefined) throw new Error('model script exhausted');
      return typeof reply === 'string' ? { role: 'assistant', content: reply } : reply;
    },
  };
}

const ask = (content = 'I am vegetarian.'): ChatMessage[] => [
  { role: 'system', content: 'Extract facts about the user.' },
  { role: 'user', content },
];

describe('generateObject', () => {
  it('returns the validated object of a valid first reply, with the schema in the system message', async () => {
    const model = scripted([JSON.stringify(valid)]);
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages: ask() });
    expect(result.object).toEqual(valid);
    expect(result.attempts).toBe(1);
    expect(model.prompts).toHaveLength(1);
    const [system, user] = model.prompts[0]!;
    expect(model.prompts[0]).toHaveLength(2);
    expect(system!.role).toBe('system');
    expect(system!.content).toMatch(/^Extract facts about the user\.\n\n/);
    expect(system!.content).toContain('"category"');
    expect(system!.content).toContain('JSON only');
    expect(user).toEqual({ role: 'user', content: 'I am vegetarian.' });
  });

  it('adds a system message when the conversation has none', async () => {
    const model = scripted([JSON.stringify(valid)]);
    await generateObject(model, {
      schema: Facts,
      schemaName: 'facts',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(model.prompts[0]!.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('takes the JSON out of a ```json fence after leading prose', async () => {
    const model = scripted([
      `Sure! Here are the facts:\n\n\`\`\`json\n${JSON.stringify(valid, null, 2)}\n\`\`\`\nDone.`,
    ]);
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages: ask() });
    expect(result).toMatchObject({ object: valid, attempts: 1 });
  });

  it('takes a bare object after prose, braces inside strings included', async () => {
    const model = scripted([
      `The answer is {"facts":[{"content":"likes {curly} braces and \\"quotes\\"","category":"general"}]} — hope it helps`,
    ]);
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages: ask() });
    expect(result.object.facts[0]!.content).toBe('likes {curly} braces and "quotes"');
  });

  it('repairs an invalid reply once, listing the issue paths in the repair message', async () => {
    const model = scripted([
      JSON.stringify({ facts: [{ content: '', category: 'general' }, { content: 'x' }] }),
      JSON.stringify(valid),
    ]);
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages: ask() });
    expect(result).toMatchObject({ object: valid, attempts: 2 });
    expect(model.prompts).toHaveLength(2);
    const repair = model.prompts[1]!;
    // The first prompt, the invalid reply, then the issues.
    expect(repair.slice(0, 2)).toEqual(model.prompts[0]);
    expect(repair[2]).toEqual({
      role: 'assistant',
      content: JSON.stringify({ facts: [{ content: '', category: 'general' }, { content: 'x' }] }),
    });
    expect(repair[3]!.role).toBe('user');
    expect(repair[3]!.content).toContain('- facts[0].content: ');
    expect(repair[3]!.content).toContain('- facts[1].category: ');
    expect(repair[3]!.content).toContain('corrected JSON object only');
    expect(repair[3]!.content).not.toContain('JSON Schema');
  });

  it('lists at most ten issues in the repair message', async () => {
    const Many = z.object(Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`f${i}`, z.string()])));
    const model = scripted([
      '{}',
      JSON.stringify(Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`f${i}`, 'v']))),
    ]);
    await generateObject(model, { schema: Many, schemaName: 'many', messages: ask() });
    const repair = model.prompts[1]!.at(-1)!.content;
    expect(repair.split('\n').filter((line) => /^- f\d+: /.test(line))).toHaveLength(10);
    expect(repair).toContain('- … and 4 more');
  });

  it('throws a StructuredOutputError with the issues and the raw text after two invalid replies', async () => {
    const model = scripted([
      JSON.stringify({ facts: 'none' }),
      JSON.stringify({ facts: [{ content: 'Vegetarian' }] }),
    ]);
    const error = await generateObject(model, { schema: Facts, schemaName: 'facts', messages: ask() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(isKiokuError(error, 'MODEL_OUTPUT')).toBe(true);
    const e = error as StructuredOutputError;
    expect(e.issues).toEqual([{ path: 'facts[0].category', message: expect.any(String) }]);
    expect(e.details).toMatchObject({
      schemaName: 'facts',
      attempts: 2,
      issues: e.issues,
      text: JSON.stringify({ facts: [{ content: 'Vegetarian' }] }),
    });
    expect(e.message).toContain('facts[0].category');
    expect(model.prompts).toHaveLength(2);
  });

  it('cuts the raw text in the error to a few KB', async () => {
    const long = `no json here ${'x'.repeat(20_000)}`;
    const error = (await generateObject(scripted([long, long]), {
      schema: Facts,
      schemaName: 'facts',
      messages: ask(),
    }).catch((e: unknown) => e)) as StructuredOutputError;
    expect(error.issues).toEqual([{ path: '', message: 'the reply contains no JSON object' }]);
    const text = error.details.text as string;
    expect(text.length).toBeLessThan(4200);
    expect(text).toMatch(/… \(\d+ more characters\)$/);
  });

  it('repairs truncated JSON, telling the model it was truncated', async () => {
    const full = JSON.stringify(valid);
    const model = scripted([`\`\`\`json\n${full.slice(0, full.length - 8)}`, full]);
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages: ask() });
    expect(result.attempts).toBe(2);
    expect(model.prompts[1]!.at(-1)!.content).toContain('(reply): the JSON is truncated');
  });

  it('sums the usage the model reports over both attempts and adds it to the ledger', async () => {
    const model = scripted([
      { role: 'assistant', content: 'not json', usage: { inputTokens: 100, outputTokens: 5 } },
      { role: 'assistant', content: JSON.stringify(valid), usage: { inputTokens: 130, outputTokens: 20 } },
    ]);
    const ledger = new UsageLedger();
    const result = await generateObject(model, {
      schema: Facts,
      schemaName: 'facts',
      messages: ask(),
      usage: ledger,
      label: 'extract',
    });
    expect(result.usage).toEqual({ inputTokens: 230, outputTokens: 25 });
    expect(ledger.entries).toEqual([{ label: 'extract', inputTokens: 230, outputTokens: 25 }]);
    await generateObject(
      scripted([{ role: 'assistant', content: '{"facts":[]}', usage: { inputTokens: 7, outputTokens: 3 } }]),
      {
        schema: Facts,
        schemaName: 'facts',
        messages: ask(),
        usage: ledger,
      },
    );
    expect(ledger.entries.map((e) => e.label)).toEqual(['extract', 'facts']);
    expect(ledger.total).toEqual({ inputTokens: 237, outputTokens: 28 });
  });

  it('counts usage with the tokenizer, marked estimated, when the model reports none', async () => {
    const model = scripted([JSON.stringify(valid)]);
    const ledger = new UsageLedger();
    const result = await generateObject(model, {
      schema: Facts,
      schemaName: 'facts',
      messages: ask(),
      usage: ledger,
    });
    expect(result.usage).toEqual({
      inputTokens: countMessagesTokens(defaultTokenizer, model.prompts[0]!),
      outputTokens: defaultTokenizer.count(JSON.stringify(valid)),
      estimated: true,
    });
    expect(ledger.total.estimated).toBe(true);
  });

  it('adds what a failing call spent to the ledger before throwing', async () => {
    const ledger = new UsageLedger();
    const model = scripted([
      { role: 'assistant', content: '{', usage: { inputTokens: 10, outputTokens: 1 } },
      { role: 'assistant', content: '[]', usage: { inputTokens: 12, outputTokens: 1 } },
    ]);
    const error = await generateObject(model, {
      schema: Facts,
      schemaName: 'facts',
      messages: ask(),
      usage: ledger,
    }).catch((e: unknown) => e);
    expect(isKiokuError(error, 'MODEL_OUTPUT')).toBe(true);
    expect((error as StructuredOutputError).details.usage).toEqual({ inputTokens: 22, outputTokens: 2 });
    expect(ledger.entries).toEqual([{ label: 'facts', inputTokens: 22, outputTokens: 2 }]);
  });

  it("uses the model's completeJson when it has one, with the JSON Schema and the messages unchanged", async () => {
    const requests: JsonCompletionRequest[] = [];
    const texts = ['{"facts":[{"content":"Vegetarian"}]}', JSON.stringify(valid)];
    const model: ChatModel = {
      complete: () => Promise.reject(new Error('complete must not be called')),
      async completeJson(request) {
        requests.push(request);
        return { text: texts.shift()!, usage: { inputTokens: 50, outputTokens: 10 } };
      },
    };
    const result = await generateObject(model, { schema: Facts, schemaName: 'facts', messages: ask() });
    expect(result).toEqual({ object: valid, attempts: 2, usage: { inputTokens: 100, outputTokens: 20 } });
    expect(requests[0]!.schemaName).toBe('facts');
    expect(requests[0]!.messages).toEqual(ask());
    expect(requests[0]!.jsonSchema).toMatchObject({
      type: 'object',
      properties: { facts: { type: 'array', maxItems: 5 } },
      required: ['facts'],
    });
    expect(requests[0]!.jsonSchema).not.toHaveProperty('$schema');
    const repair = requests[1]!.messages.at(-1)!.content;
    expect(repair).toContain('facts[0].category');
    // Native output carried the schema beside the prompt; the repair request names it too.
    expect(repair).toContain(JSON.stringify(requests[0]!.jsonSchema));
  });

  it('passes the signal on and stops before calling an aborted model', async () => {
    const controller = new AbortController();
    controller.abort();
    const model = scripted([JSON.stringify(valid)]);
    await expect(
      generateObject(model, {
        schema: Facts,
        schemaName: 'facts',
        messages: ask(),
        signal: controller.signal,
      }),
    ).rejects.toThrow();
    expect(model.prompts).toHaveLength(0);
  });
});

describe('extractJson', () => {
  it('reads plain, fenced, prefixed, truncated and missing JSON', () => {
    expect(extractJson(' {"a":1} ')).toEqual({ ok: true, value: { a: 1 } });
    expect(extractJson('```\n[1,2]\n```')).toEqual({ ok: true, value: [1, 2] });
    expect(extractJson('Result [draft]: {"a":[1]} ok')).toEqual({ ok: true, value: { a: [1] } });
    expect(extractJson('{"a": [1, 2')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('truncated'),
    });
    expect(extractJson('{"a": 1]')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('mismatched'),
    });
    expect(extractJson('{a: 1}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('not valid JSON'),
    });
    expect(extractJson('   ')).toMatchObject({ ok: false, problem: expect.stringContaining('empty') });
    expect(extractJson('no object')).toEqual({ ok: false, problem: 'the reply contains no JSON object' });
  });
});
