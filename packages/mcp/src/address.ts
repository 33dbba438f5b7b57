import { isIP } from 'node:net';
import { ValidationError } from '@kioku/core';

/** Where an HTTP server listens: `127.0.0.1:8765`, `[::1]:8765`, `localhost:8765`, `0.0.0.0:8765`. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** Parse `host:port` (IPv6 in brackets). Port 0 picks a free port. */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65_535) {
    throw new ValidationError(`"${text}" is not host:port; write e.g. 127.0.0.1:8765 or [::1]:8765.`);
  }
  const host = (match[1] ?? match[2])!;
  if (match[1] !== undefined && isIP(host) !== 6) {
    throw new ValidationError(`"${text}": [${host}] is not an IPv6 address.`);
  }
  return { host, port };
}

/** True for addresses only this machine can reach: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  return mapped !== null && mapped[1]!.startsWith('127.');
}

/** `host` as it appears in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
