import { z } from 'zod';
import { type OutputIssue, StructuredOutputError } from '../foundation/errors.js';
import { activePass } from '../telemetry/telemetry.js';
import { defaultTokenizer, type Tokenizer } from '../tokens/tokenizer.js';
import type { ChatModel, ModelUsage } from './chat-model.js';
import { type ChatMessage, countMessagesTokens } from './messages.js';
import { observeModelCall } from './model-call-telemetry.js';

/** One labelled charge of a `UsageLedger`. */
export interface UsageEntry extends ModelUsage {
  label: string;
}

/**
 * What a pass spent on model calls: every `generateObject` given the ledger adds one entry (all its
 * attempts, failed ones included). `total` is estimated when any entry is.
 */
export class UsageLedger {
  readonly #entries: UsageEntry[] = [];

  add(usage: ModelUsage, label: string): void {
    this.#entries.push({ label, ...usage });
  }

  get entries(): readonly UsageEntry[] {
    return this.#entries;
  }

  get total(): ModelUsage {
    return sumUsage(this.#entries);
  }
}

/** The sum of several usages; estimated when any of them is. */
export function sumUsage(usages: readonly ModelUsage[]): ModelUsage {
  let inputTokens = 0;
  let outputTokens = 0;
  let estimated = false;
  for (const usage of usages) {
    inputTokens += usage.inputTokens;
    outputTokens += usage.outputTokens;
    estimated ||= usage.estimated === true;
  }
  return { inputTokens, outputTokens, ...(estimated ? { estimated: true } : {}) };
}

export interface GenerateObjectRequest<S extends z.ZodType> {
  schema: S;
  /** A short name of the schema, sent to the model (letters, digits, `_` and `-` are safest). */
  schemaName: string;
  messages: ChatMessage[];
  signal?: AbortSignal;
  /** The ledger of the pass: the call's usage (all attempts) is added to it, even when it fails. */
  usage?: UsageLedger;
  /** The ledger entry's label (default `schemaName`). */
  label?: string;
  /** Counts usage the model does not report (default `defaultTokenizer`). */
  tokenizer?: Tokenizer;
}

export interface GenerateObjectResult<T> {
  object: T;
  /** Summed over the attempts; `estimated` when any attempt's usage was counted by `tokenizer`. */
  usage: ModelUsage;
  /** 1, or 2 when the repair attempt was needed. */
  attempts: number;
}

/** Most issues listed in a repair request (all of them, up to `MAX_DETAIL_ISSUES`, go in the error). */
const MAX_REPAIR_ISSUES = 10;
const MAX_DETAIL_ISSUES = 50;
/** The raw reply kept in a `StructuredOutputError`'s details. */
const MAX_ERROR_TEXT = 4096;

/**
 * Ask `model` for an object of `schema`. Uses the model's native structured output (`completeJson`) when it
 * has one, otherwise `complete` with the JSON Schema in a system instruction (JSON is then taken from the
 * reply even inside a ```json fence or after prose). The reply is parsed and validated; if it is not
 * valid, the model gets one repair attempt (its reply and the issues, path by path); if that is not valid
 * either, a `StructuredOutputError` (code `MODEL_OUTPUT`) with the issues and the raw text is thrown.
 */
export async function generateObject<S extends z.ZodType>(
  model: ChatModel,
  request: GenerateObjectRequest<S>,
): Promise<GenerateObjectResult<z.output<S>>> {
  const { schema, schemaName, signal } = request;
  const tokenizer = request.tokenizer ?? defaultTokenizer;
  const jsonSchema = toJsonSchema(schema);
  const native = model.completeJson !== undefined;
  let messages = native
    ? [...request.messages]
    : withJsonInstruction(request.messages, schemaName, jsonSchema);
  const spent: ModelUsage[] = [];
  let issues: OutputIssue[] = [];
  let text = '';
  try {
    for (let attempt = 1; attempt <= 2; attempt++) {
      signal?.throwIfAborted();
      const asked = messages;
      const reply = await observeModelCall(
        model,
        activePass() ?? passOf(request.label ?? schemaName),
        async () => {
          const answer = await ask(model, { messages: asked, jsonSchema, schemaName, native, signal });
          const usage = answer.usage ?? {
            inputTokens:
              countMessagesTokens(tokenizer, asked) +
              (native ? tokenizer.count(JSON.stringify(jsonSchema)) : 0),
            outputTokens: tokenizer.count(answer.text),
            estimated: true,
          };
          return { text: answer.text, usage };
        },
        (r) => r.usage,
      );
      text = reply.text;
      spent.push(reply.usage);
      const parsed = parseObject(schema, text);
      if (parsed.ok) return { object: parsed.value, usage: sumUsage(spent), attempts: attempt };
      issues = parsed.issues;
      messages = [
        ...messages,
        { role: 'assistant', content: text },
        // A native request may reach a server that ignored the schema: the repair request names it.
        { role: 'user', content: repairMessage(schemaName, issues, native ? jsonSchema : undefined) },
      ];
    }
  } finally {
    if (spent.length > 0) request.usage?.add(sumUsage(spent), request.label ?? schemaName);
  }
  const usage = sumUsage(spent);
  throw new StructuredOutputError(
    `The model's reply is not a valid ${schemaName} object after a repair attempt: ${issues
      .slice(0, 3)
      .map(formatIssue)
      .join('; ')}${issues.length > 3 ? ` (and ${issues.length - 3} more)` : ''}.`,
    {
      issues: issues.slice(0, MAX_DETAIL_ISSUES),
      details: { schemaName, attempts: spent.length, usage, text: cut(text, MAX_ERROR_TEXT) },
    },
  );
}

/** The pass a label names (`extraction:batch` → `extraction`), for telemetry. */
function passOf(label: string): string {
  const colon = label.indexOf(':');
  return colon < 0 ? label : label.slice(0, colon);
}

async function ask(
  model: ChatModel,
  request: {
    messages: ChatMessage[];
    jsonSchema: Record<string, unknown>;
    schemaName: string;
    native: boolean;
    signal: AbortSignal | undefined;
  },
): Promise<{ text: string; usage?: ModelUsage }> {
  const signal = request.signal ? { signal: request.signal } : {};
  if (request.native && model.completeJson) {
    const { messages, jsonSchema, schemaName } = request;
    return model.completeJson({ messages, jsonSchema, schemaName, ...signal });
  }
  const reply = await model.complete({ messages: request.messages, tools: [], ...signal });
  return { text: reply.content, ...(reply.usage ? { usage: reply.usage } : {}) };
}

/** The JSON Schema a model is asked to fill: what `schema` accepts as input, without `$schema`. */
export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' });
  const { $schema: _ignored, ...rest } = generated as Record<string, unknown>;
  return rest;
}

/** The system instruction that asks for JSON of a schema (for models without native structured output). */
export function jsonInstruction(schemaName: string, jsonSchema: Record<string, unknown>): string {
  return [
    `Answer with one JSON object named ${schemaName} that conforms to this JSON Schema:`,
    JSON.stringify(jsonSchema),
    'Answer with the JSON only: no prose before or after it, no Markdown fence.',
  ].join('\n');
}

/** `messages` with `jsonInstruction` added to the leading system message (or as a new first message). */
export function withJsonInstruction(
  messages: readonly ChatMessage[],
  schemaName: string,
  jsonSchema: Record<string, unknown>,
): ChatMessage[] {
  const instruction = jsonInstruction(schemaName, jsonSchema);
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ ...first, content: `${first.content}\n\n${instruction}` }, ...rest];
  return [{ role: 'system', content: instruction }, ...messages];
}

/** Parse a model's reply and validate it: the object, or the issues (JSON problems under path `''`). */
export function parseObject<S extends z.ZodType>(
  schema: S,
  text: string,
): { ok: true; value: z.output<S> } | { ok: false; issues: OutputIssue[] } {
  const json = extractJson(text);
  if (!json.ok) return { ok: false, issues: [{ path: '', message: json.problem }] };
  const result = schema.safeParse(json.value);
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    issues: result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })),
  };
}

/**
 * The JSON value in a model's reply: the whole reply, the inside of a ```json fence, or the first balanced
 * `{…}` / `[…]` after leading prose. A reply that stops before its object closes is reported as truncated.
 */
export function extractJson(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, problem: 'the reply is empty; expected a JSON object' };
  const whole = tryParse(trimmed);
  if (whole.ok) return whole;
  const fence = /```[a-zA-Z]*[ \t]*\r?\n?([\s\S]*?)(?:```|$)/.exec(trimmed);
  const body = fence ? fence[1]!.trim() : trimmed;
  if (fence) {
    const fenced = tryParse(body);
    if (fenced.ok) return fenced;
  }
  let first: string | undefined;
  let tries = 0;
  for (let start = nextOpening(body, 0); start >= 0 && tries < 20; start = nextOpening(body, start + 1)) {
    tries++;
    const end = closingIndex(body, start);
    if (end === -1) {
      first ??= 'the JSON is truncated: the reply ends before its object is closed';
      continue;
    }
    if (end === -2) {
      first ??= 'the reply is not valid JSON (mismatched brackets)';
      continue;
    }
    const candidate = tryParse(body.slice(start, end + 1));
    if (candidate.ok) return candidate;
    first ??= `the reply is not valid JSON (${candidate.problem})`;
  }
  return { ok: false, problem: first ?? 'the reply contains no JSON object' };
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
}

function nextOpening(text: string, from: number): number {
  for (let i = from; i < text.length; i++) if (text[i] === '{' || text[i] === '[') return i;
  return -1;
}

/** Index of the bracket closing the one at `start` (strings respected); -1 if none, -2 on a mismatch. */
function closingIndex(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -2;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/** `facts[0].content` from zod's `['facts', 0, 'content']`. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

function formatIssue(issue: OutputIssue): string {
  return `${issue.path === '' ? '(reply)' : issue.path}: ${issue.message}`;
}

function repairMessage(
  schemaName: string,
  issues: readonly OutputIssue[],
  jsonSchema: Record<string, unknown> | undefined,
): string {
  const listed = issues.slice(0, MAX_REPAIR_ISSUES).map((issue) => `- ${formatIssue(issue)}`);
  if (issues.length > MAX_REPAIR_ISSUES) listed.push(`- … and ${issues.length - MAX_REPAIR_ISSUES} more`);
  return [
    `Your reply is not a valid ${schemaName} object:`,
    ...listed,
    ...(jsonSchema ? [`The JSON Schema it must conform to: ${JSON.stringify(jsonSchema)}`] : []),
    'Answer again with the corrected JSON object only: no prose, no Markdown fence.',
  ].join('\n');
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
