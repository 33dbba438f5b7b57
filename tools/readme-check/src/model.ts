import type { ServerResponse } from 'node:http';
import { HashingEmbedder } from '@kioku/core';
import { completion, json, sse, startScriptedServer, toolCalls } from '@kioku/openai-test-server';
import type { ScriptedReply } from './replies.js';
import { minimalInstance } from './schema-instance.js';

type Body = Record<string, unknown>;

/** What a request past the example's script gets: the examples print it. */
const DEFAULT_REPLY = 'OK.';

/**
 * The model a README example talks to through OPENAI_BASE_URL: tools/openai-test-server answering
 * Chat Completions, Responses (what `@ai-sdk/openai` and the Agents SDK call by default) and embeddings,
 * streamed or not as asked. A chat request gets the next text or tool call of `replies`, else
 * `DEFAULT_REPLY`; a request for a JSON-schema answer the next `{ json }` of `replies`, else the schema's
 * smallest instance; embeddings are `HashingEmbedder` vectors of the size the request names (1536 by
 * default, 3072 for a "large" model).
 */
export async function startScriptedModel(replies: readonly ScriptedReply[]) {
  const script = [...replies];
  let calls = 0;
  const chatReply = (): Reply => {
    const next = script[0];
    if (next === undefined || (typeof next === 'object' && 'json' in next)) return { text: DEFAULT_REPLY };
    script.shift();
    if (typeof next === 'string') return { text: next };
    calls++;
    return { call: { id: `call_${calls}`, name: next.call, arguments: JSON.stringify(next.arguments) } };
  };
  const objectReply = (schema: unknown): Reply => {
    const next = script[0];
    if (typeof next === 'object' && 'json' in next) {
      script.shift();
      return { text: JSON.stringify(next.json) };
    }
    return { text: JSON.stringify(minimalInstance(schema)) };
  };
  return startScriptedServer((res, body, req) => {
    const path = req.url ?? '';
    if (path.endsWith('/embeddings')) return void embeddings(res, body);
    if (path.endsWith('/chat/completions')) {
      const format = body.response_format as { json_schema?: { schema?: unknown } } | undefined;
      const reply = format?.json_schema ? objectReply(format.json_schema.schema) : chatReply();
      return chatCompletion(reply, body.stream === true)(res, body, req);
    }
    if (path.endsWith('/responses')) {
      const format = (body.text as { format?: { type?: string; schema?: unknown } } | undefined)?.format;
      const reply = format?.type === 'json_schema' ? objectReply(format.schema) : chatReply();
      return void responses(res, reply, String(body.model), body.stream === true);
    }
    json(res, 404, { error: { message: `readme-check's scripted model does not serve ${path}` } });
  });
}

interface Reply {
  text?: string;
  call?: { id: string; name: string; arguments: string };
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function chatCompletion(reply: Reply, stream: boolean) {
  const { text, call } = reply;
  if (!stream) {
    if (call) return toolCalls({ ...call, arguments: JSON.parse(call.arguments) });
    return completion({ content: text }, { usage: USAGE });
  }
  if (call) {
    const delta = {
      index: 0,
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    };
    return sse([{ role: 'assistant', tool_calls: [delta] }], { finishReason: 'tool_calls' });
  }
  return sse([{ role: 'assistant', content: text }], { finishReason: 'stop' });
}

/** A Responses API answer: one output item (a message or a function call), as JSON or as its events. */
function responses(res: ServerResponse, reply: Reply, model: string, stream: boolean) {
  const item = reply.call
    ? {
        type: 'function_call',
        id: `fc_${reply.call.id}`,
        call_id: reply.call.id,
        name: reply.call.name,
        arguments: reply.call.arguments,
        status: 'completed',
      }
    : {
        type: 'message',
        id: 'msg_1',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: reply.text, annotations: [] }],
      };
  const response = (status: string, output: unknown[]) => ({
    id: 'resp_1',
    object: 'response',
    created_at: 0,
    status,
    model,
    output,
    error: null,
    incomplete_details: null,
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    },
  });
  if (!stream) return json(res, 200, response('completed', [item]));
  const at = { item_id: item.id, output_index: 0 };
  const events: Body[] = [
    { type: 'response.created', response: response('in_progress', []) },
    {
      type: 'response.output_item.added',
      output_index: 0,
      item: { ...item, status: 'in_progress', ...(reply.call ? { arguments: '' } : { content: [] }) },
    },
    ...(reply.call
      ? [
          { type: 'response.function_call_arguments.delta', ...at, delta: reply.call.arguments },
          { type: 'response.function_call_arguments.done', ...at, arguments: reply.call.arguments },
        ]
      : [
          {
            type: 'response.content_part.added',
            ...at,
            content_index: 0,
            part: { type: 'output_text', text: '', annotations: [] },
          },
          { type: 'response.output_text.delta', ...at, content_index: 0, delta: reply.text, logprobs: [] },
          { type: 'response.output_text.done', ...at, content_index: 0, text: reply.text, logprobs: [] },
          {
            type: 'response.content_part.done',
            ...at,
            content_index: 0,
            part: { type: 'output_text', text: reply.text, annotations: [] },
          },
        ]),
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: response('completed', [item]) },
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  events.forEach((event, n) => {
    res.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: n })}\n\n`);
  });
  res.end();
}

async function embeddings(res: ServerResponse, body: Body) {
  const input = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input)];
  const dimensions = Number(body.dimensions ?? (String(body.model).includes('large') ? 3072 : 1536));
  const vectors = await new HashingEmbedder({ dimensions }).embed(input);
  const base64 = body.encoding_format === 'base64';
  json(res, 200, {
    object: 'list',
    model: body.model,
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
    })),
    usage: { prompt_tokens: input.length, total_tokens: input.length },
  });
}
