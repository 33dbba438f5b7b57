import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives as `default` under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** Environment variable that overrides where Qdrant's OpenAPI document is read from. */
export const OPENAPI_PATH_ENV = 'QDRANT_OPENAPI_SCHEMA';

/**
 * The copy of Qdrant's OpenAPI document in this package (`openapi/qdrant-openapi.json`; this file lives at
 * `tools/qdrant-test-server/{src,dist}/`), unless `QDRANT_OPENAPI_SCHEMA` names another file.
 */
export function defaultOpenApiPath(): string {
  const override = process.env[OPENAPI_PATH_ENV];
  if (override) return resolve(override);
  return fileURLToPath(new URL('../openapi/qdrant-openapi.json', import.meta.url));
}

const DEFS_ID = 'https://kioku.invalid/qdrant-openapi.json';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * OpenAPI 3.0 schema → JSON Schema (draft-07) that Ajv validates strictly:
 * - `nullable: true` becomes a `null` type: `{type: X, nullable}` → `type: [X, 'null']`; a bare
 *   `{nullable: true}` (Qdrant writes `anyOf: [{$ref}, {nullable: true}]` for "X or null") becomes
 *   `{type: 'null'}` — left as it is, Ajv would read it as "anything" and the `anyOf` would accept every
 *   value, which is exactly the check this server exists for;
 * - `$ref: '#/components/schemas/X'` points into one shared schema of `$defs`;
 * - `example` (documentation only) is dropped.
 */
export function toJsonSchema(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'example' || key === 'nullable') continue;
    if (key === '$ref' && typeof value === 'string') {
      out.$ref = value.replace(/^#\/components\/schemas\//, `${DEFS_ID}#/$defs/`);
      continue;
    }
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(v)]));
      continue;
    }
    out[key] = toJsonSchema(value);
  }
  if (schema.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    return out;
  }
  const { description, default: defaultValue, deprecated, ...rest } = out;
  const meta: JsonObject = {};
  if (description !== undefined) meta.description = description;
  if (defaultValue !== undefined) meta.default = defaultValue;
  if (deprecated !== undefined) meta.deprecated = deprecated;
  if (Object.keys(rest).length === 0) return { ...meta, type: 'null' };
  return { ...meta, anyOf: [rest, { type: 'null' }] };
}

const UINT = (max: number) => ({
  type: 'number' as const,
  validate: (x: number) => Number.isInteger(x) && x >= 0 && x <= max,
});

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  validate: ValidateFunction;
  schema: Json;
}

export interface OpenApiOperation {
  operationId: string;
  method: string;
  /** The path template, e.g. `/collections/{collection_name}/points`. */
  template: string;
  pattern: RegExp;
  pathNames: string[];
  parameters: OpenApiParameter[];
  body: { required: boolean; validate: ValidateFunction } | undefined;
  /** By status code, `4XX`-style ranges, or `default`. */
  responses: Map<string, ValidateFunction | undefined>;
}

/** Qdrant's REST API as operations with compiled request and response validators. */
export class OpenApiSpec {
  readonly path: string;
  readonly version: string;
  readonly operations: OpenApiOperation[] = [];
  readonly #ajv: Ajv;

  constructor(path = defaultOpenApiPath()) {
    this.path = path;
    let doc: JsonObject;
    try {
      doc = JSON.parse(readFileSync(path, 'utf8')) as JsonObject;
    } catch (error) {
      throw new Error(
        `Cannot read Qdrant's OpenAPI schema at ${path} (set ${OPENAPI_PATH_ENV} to its location): ${error}`,
      );
    }
    this.version = String((doc.info as JsonObject | undefined)?.version ?? 'unknown');
    this.#ajv = new Ajv({ strict: true, strictTypes: false, allowUnionTypes: true, allErrors: true });
    addFormats(this.#ajv, ['uuid', 'date-time', 'uri', 'int32', 'int64', 'float', 'double']);
    this.#ajv.addFormat('uint', UINT(Number.MAX_SAFE_INTEGER));
    this.#ajv.addFormat('uint64', UINT(Number.MAX_SAFE_INTEGER));
    this.#ajv.addFormat('uint32', UINT(2 ** 32 - 1));
    this.#ajv.addFormat('uint16', UINT(2 ** 16 - 1));
    this.#ajv.addFormat('uint8', UINT(255));
    // Binary uploads and partial dates appear only in endpoints the adapter does not use.
    this.#ajv.addFormat('binary', true);
    this.#ajv.addFormat('partial-date-time', true);
    const schemas = (doc.components as JsonObject).schemas as JsonObject;
    this.#ajv.addSchema({
      $id: DEFS_ID,
      $defs: Object.fromEntries(Object.entries(schemas).map(([k, v]) => [k, toJsonSchema(v)])),
    });

    for (const [template, item] of Object.entries(doc.paths as JsonObject)) {
      if (!isObject(item)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!isObject(op) || !['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue;
        const pathNames: string[] = [];
        const pattern = new RegExp(
          `^${template
            .split(/(\{[^}]+\})/)
            .map((part) => {
              const name = /^\{([^}]+)\}$/.exec(part)?.[1];
              if (!name) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
              pathNames.push(name);
              return '([^/]+)';
            })
            .join('')}$`,
        );
        const parameters = ((op.parameters as Json[] | undefined) ?? []).filter(isObject).map((p) => ({
          name: String(p.name),
          in: p.in as OpenApiParameter['in'],
          required: p.required === true,
          schema: toJsonSchema(p.schema ?? {}),
          validate: this.#ajv.compile(toJsonSchema(p.schema ?? {}) as object),
        }));
        const bodySchema = (
          ((op.requestBody as JsonObject | undefined)?.content as JsonObject | undefined)?.[
            'application/json'
          ] as JsonObject | undefined
        )?.schema;
        const body =
          bodySchema === undefined
            ? undefined
            : {
                required: (op.requestBody as JsonObject).required === true,
                validate: this.#ajv.compile(toJsonSchema(bodySchema) as object),
              };
        const responses = new Map<string, ValidateFunction | undefined>();
        for (const [code, response] of Object.entries((op.responses as JsonObject | undefined) ?? {})) {
          const schema = (
            ((response as JsonObject).content as JsonObject | undefined)?.['application/json'] as
              | JsonObject
              | undefined
          )?.schema;
          responses.set(
            code,
            schema === undefined ? undefined : this.#ajv.compile(toJsonSchema(schema) as object),
          );
        }
        this.operations.push({
          operationId: String(op.operationId),
          method: method.toUpperCase(),
          template,
          pattern,
          pathNames,
          parameters,
          body,
          responses,
        });
      }
    }
    // Literal segments win over parameters (`/collections/aliases` before `/collections/{name}`).
    this.operations.sort((a, b) => a.pathNames.length - b.pathNames.length);
  }

  /** The operation for a request, with its decoded path parameters. */
  match(
    method: string,
    path: string,
  ): { operation: OpenApiOperation; params: Record<string, string> } | undefined {
    for (const operation of this.operations) {
      if (operation.method !== method) continue;
      const m = operation.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      operation.pathNames.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1]!);
      });
      return { operation, params };
    }
    return undefined;
  }

  /** The validator of a response with this status (exact code, then `4XX`, then `default`). */
  responseValidator(operation: OpenApiOperation, status: number): ValidateFunction | undefined | null {
    const code = String(status);
    for (const key of [code, `${code[0]}XX`, 'default']) {
      if (operation.responses.has(key)) return operation.responses.get(key);
    }
    return null;
  }

  /** Ajv's errors as readable lines. */
  static describe(validate: ValidateFunction): string[] {
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
    );
  }
}

/** A query-string value as the JSON value its schema expects (`true` → true, `5` → 5). */
export function coerceQueryValue(raw: string, schema: Json): Json {
  const types = new Set<string>();
  const collect = (s: Json) => {
    if (!isObject(s)) return;
    if (typeof s.type === 'string') types.add(s.type);
    if (Array.isArray(s.type)) for (const t of s.type) types.add(String(t));
    for (const key of ['anyOf', 'oneOf'])
      if (Array.isArray(s[key])) for (const x of s[key] as Json[]) collect(x);
    if (typeof s.$ref === 'string') types.add('ref');
  };
  collect(schema);
  if ((types.has('boolean') || types.has('ref')) && (raw === 'true' || raw === 'false'))
    return raw === 'true';
  if ((types.has('integer') || types.has('number') || types.has('ref')) && /^-?\d+(\.\d+)?$/.test(raw)) {
    return Number(raw);
  }
  return raw;
}
