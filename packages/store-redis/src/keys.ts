import type { StoreKind } from '@kioku/core';

/**
 * Every user-controlled part of a key (user, agent, thread, record or session id, working-memory key)
 * goes through `encodePart`: letters, digits and `_ . @ + -` stay as they are (so keys stay readable),
 * every other character becomes `%XX` (ASCII) or `%uXXXX` (any other UTF-16 unit), `%` included. The
 * encoding is injective and never produces `:`, `{`, `}` or a glob character (`* ? [ ] \`), so no value
 * can end a key part early, reach into another user's keys or widen a SCAN pattern. Ids are already
 * validated by core before they get here; the encoding is the second line of defence.
 */
export function encodePart(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (/[A-Za-z0-9_.@+-]/.test(ch)) out += ch;
    else {
      const code = value.charCodeAt(i);
      out +=
        code < 0x80
          ? `%${code.toString(16).toUpperCase().padStart(2, '0')}`
          : `%u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    }
  }
  return out;
}

export function decodePart(encoded: string): string {
  return encoded.replace(/%u([0-9A-F]{4})|%([0-9A-F]{2})/g, (_m, wide: string | undefined, narrow: string) =>
    String.fromCharCode(Number.parseInt(wide ?? narrow, 16)),
  );
}

/** The encoded form of `/`, the working-memory key separator (Lua scripts split encoded keys on it). */
export const ENCODED_SLASH = encodePart('/');

/** Escape Redis glob metacharacters, for the configured prefix inside a SCAN MATCH pattern. */
export function globEscape(value: string): string {
  return value.replace(/[*?[\]\\]/g, '\\$&');
}

/** Stands for "no agent" in a key: `-` can never be an id (ids must not start with `-`). */
export const NO_AGENT = '-';

/** A partition: one user (in braces, Redis Cluster's hash tag) and, for most kinds, one agent. */
export interface PartitionAddress {
  userId: string;
  agentId?: string | undefined;
}

/**
 * Builds every key under one prefix. Layout (`P` = prefix, `U` = encoded user id, `A` = encoded agent id
 * or `-`):
 *
 * ```
 * P facts:{U}:A:rec|ord|log|meta          documents:{U}:A:…     details:{U}:rec|ord|log|meta
 * P plans:{U}:A:<thread>
 * P working:{U}:A:e:<key>   …:ns:<namespace>   …:exp   …:meta
 * P sessions:{U}:A:idx|ord|meta   …:s:<session>:kv|kvo|tr
 * ```
 */
export class KeySpace {
  constructor(readonly prefix: string) {}

  /** The partition base `P kind:{U}:A` (details: `P details:{U}`). */
  base(kind: StoreKind, address: PartitionAddress): string {
    const user = `${this.prefix}${kind}:{${encodePart(address.userId)}}`;
    if (kind === 'details') return user;
    return `${user}:${address.agentId === undefined ? NO_AGENT : encodePart(address.agentId)}`;
  }

  /** A SCAN pattern for keys of `kind` ending in `suffix` (one user's or everyone's). */
  pattern(kind: StoreKind, suffix: string, userId?: string): string {
    const user = userId === undefined ? '*' : encodePart(userId);
    const agent = kind === 'details' ? '' : ':*';
    return `${globEscape(this.prefix)}${kind}:{${user}}${agent}${suffix}`;
  }

  /** Every key under the prefix. */
  everything(): string {
    return `${globEscape(this.prefix)}*`;
  }

  /**
   * The partition a key found by SCAN belongs to, with the rest of the key after the partition base;
   * undefined for keys that do not have this kind's shape (never trusted blindly: SCAN patterns are wide).
   */
  parse(kind: StoreKind, key: string): (PartitionAddress & { rest: string }) | undefined {
    const head = `${this.prefix}${kind}:{`;
    if (!key.startsWith(head)) return undefined;
    const shape =
      kind === 'details' ? /^([A-Za-z0-9_.@+%-]+)\}:(.+)$/ : /^([A-Za-z0-9_.@+%-]+)\}:([^:]+):(.+)$/;
    const match = shape.exec(key.slice(head.length));
    if (!match) return undefined;
    if (kind === 'details') return { userId: decodePart(match[1]!), rest: match[2]! };
    const agent = match[2]!;
    return {
      userId: decodePart(match[1]!),
      agentId: agent === NO_AGENT ? undefined : decodePart(agent),
      rest: match[3]!,
    };
  }
}
