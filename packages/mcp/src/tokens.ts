import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '@kioku/core';
import { IdSchema } from '@kioku/core/store';
import { z } from 'zod';
import type { McpIdentity } from './identity.js';

/** RFC 6750's token characters: what fits in `Authorization: Bearer <token>` unquoted. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]+=*$/;
export const TOKEN_MIN_CHARS = 32;
const TOKEN_MAX_CHARS = 512;
/** Fewer different characters than this is a typed word or a pattern, not a random token. */
const TOKEN_MIN_DISTINCT = 10;

const TokenEntrySchema = z
  .strictObject({
    user: IdSchema,
    agent: IdSchema.optional(),
    thread: IdSchema.optional(),
    /** The token itself. */
    token: z.string().optional(),
    /** Or only its SHA-256 (hex), so the file does not hold the secret. */
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (the SHA-256 of the token)')
      .optional(),
  })
  .refine((e) => (e.token === undefined) !== (e.sha256 === undefined), {
    message: 'give exactly one of "token" and "sha256"',
  });

const TokensFileSchema = z.strictObject({
  tokens: z.array(z.unknown()).min(1, 'lists no token').max(10_000),
});

/** One line of a tokens file: who a bearer token is. */
export type TokenEntry = z.infer<typeof TokenEntrySchema>;

/** Why a token is too weak to accept, or null. */
export function weakTokenProblem(token: string): string | null {
  if (token.length < TOKEN_MIN_CHARS) {
    return `it has ${token.length} characters; use at least ${TOKEN_MIN_CHARS} random ones`;
  }
  if (token.length > TOKEN_MAX_CHARS) return `it has over ${TOKEN_MAX_CHARS} characters`;
  if (!TOKEN_PATTERN.test(token)) {
    return 'it may contain only letters, digits and - . _ ~ + / (and = at the end)';
  }
  if (new Set(token).size < TOKEN_MIN_DISTINCT) {
    return `it uses fewer than ${TOKEN_MIN_DISTINCT} different characters, so it is not random`;
  }
  for (let period = 1; period <= token.length / 2; period++) {
    if (token.length % period === 0 && token.slice(0, period).repeat(token.length / period) === token) {
      return 'it repeats one short pattern, so it is not random';
    }
  }
  return null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A new random token (256 bits, base64url) and its SHA-256, for a tokens file. */
export function newToken(): { token: string; sha256: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, sha256: sha256(token).toString('hex') };
}

interface Known {
  hash: Buffer;
  identity: McpIdentity;
}

/** What an `Authorization` header proved: an identity, or why not. */
export type TokenCheck = { ok: true; identity: McpIdentity } | { ok: false; reason: 'missing' | 'invalid' };

/**
 * The bearer tokens a server accepts, each naming exactly one user (and optionally an agent and a thread).
 * Parsed from a tokens file:
 *
 * ```json
 * { "tokens": [ { "user": "alice", "agent": "claude", "token": "<at least 32 random characters>" },
 *               { "user": "bob", "sha256": "<hex SHA-256 of bob's token>" } ] }
 * ```
 *
 * A weak token, an entry that is not exactly right, or a token listed twice is refused when the file is
 * read, so a server never starts with a table it would have to guess about. Tokens are kept only as
 * SHA-256 hashes and compared with `timingSafeEqual` against every entry.
 */
export class TokenTable {
  readonly #known: readonly Known[];

  private constructor(known: readonly Known[]) {
    this.#known = known;
  }

  /** Parse and check a tokens file's JSON text; `source` names the file in error messages. */
  static parse(text: string, source = 'the tokens file'): TokenTable {
    let json: unknown;
    try {
      json = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (error) {
      throw new ValidationError(`${source} is not JSON: ${(error as Error).message}.`);
    }
    const file = TokensFileSchema.safeParse(json);
    if (!file.success) {
      const issue = file.error.issues[0];
      throw new ValidationError(
        `${source} must be { "tokens": [ { "user": "…", "token": "…" }, … ] }: ${issue?.path.join('.') || 'the file'} ${issue?.message ?? 'is invalid'}.`,
      );
    }
    const known: Known[] = [];
    const seen = new Map<string, number>();
    file.data.tokens.forEach((raw, index) => {
      const where = `${source}, entry ${index + 1}`;
      const entry = TokenEntrySchema.safeParse(raw);
      if (!entry.success) {
        const issue = entry.error.issues[0];
        const field = issue?.path.join('.');
        throw new ValidationError(`${where}: ${field ? `${field} ` : ''}${issue?.message ?? 'is invalid'}.`);
      }
      const { user, agent, thread, token, sha256: hex } = entry.data;
      const who = `${where} (user "${user}")`;
      if (token !== undefined) {
        const weak = weakTokenProblem(token);
        if (weak)
          throw new ValidationError(`${who}: the token is too weak: ${weak} (see "kioku mcp token").`);
      }
      const hash = token !== undefined ? sha256(token) : Buffer.from(hex!, 'hex');
      const key = hash.toString('hex');
      const first = seen.get(key);
      if (first !== undefined) {
        throw new ValidationError(
          `${who}: the same token as entry ${first + 1}; each token must name exactly one user.`,
        );
      }
      seen.set(key, index);
      known.push({
        hash,
        identity: {
          userId: user,
          ...(agent === undefined ? {} : { agentId: agent }),
          ...(thread === undefined ? {} : { threadId: thread }),
        },
      });
    });
    return new TokenTable(known);
  }

  /** How many tokens the table accepts. */
  get size(): number {
    return this.#known.length;
  }

  /**
   * Check an `Authorization` header. The presented token's SHA-256 is compared with every entry's in
   * constant time, without stopping at a match, so neither the token nor its place in the file shows in
   * the response time.
   */
  check(authorization: string | undefined): TokenCheck {
    const match = /^Bearer +([^\s]+) *$/i.exec(authorization ?? '');
    if (!match) return { ok: false, reason: authorization ? 'invalid' : 'missing' };
    const hash = sha256(match[1]!);
    let found: McpIdentity | undefined;
    for (const entry of this.#known) {
      if (timingSafeEqual(hash, entry.hash) && found === undefined) found = entry.identity;
    }
    return found ? { ok: true, identity: found } : { ok: false, reason: 'invalid' };
  }
}
