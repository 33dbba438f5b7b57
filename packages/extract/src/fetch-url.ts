import { StorageError, ValidationError } from '@kioku/core';

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  userAgent: string;
  fetch: typeof fetch;
  signal?: AbortSignal | undefined;
}

export interface Fetched {
  bytes: Uint8Array;
  contentType: string | undefined;
  /** The address the body came from, after redirects. */
  finalUrl: string;
}

const ACCEPT =
  'text/html, application/xhtml+xml, text/markdown, text/plain, application/pdf, ' +
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document;q=0.9, */*;q=0.1';

/** Parse and check a URL: http or https only, no credentials in it. */
export function parseHttpUrl(input: string | URL): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch (error) {
    throw new ValidationError(`"${String(input)}" is not a valid URL.`, { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(`Only http and https URLs can be fetched, not "${url.protocol}".`, {
      details: { url: redact(url) },
    });
  }
  if (url.username || url.password) {
    throw new ValidationError('URLs with credentials (user:password@) are not fetched.', {
      details: { url: redact(url) },
    });
  }
  return url;
}

function redact(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

/**
 * GET a URL safely: only http(s), every redirect hop checked (at most `maxRedirects`), one timeout for the
 * whole exchange including the body, and the body cut off as soon as it passes `maxBytes`.
 */
export async function fetchUrl(url: URL, limits: FetchLimits): Promise<Fetched> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = limits.signal ? AbortSignal.any([limits.signal, timeout]) : timeout;
  const fail = (error: unknown, what: string): never => {
    if (limits.signal?.aborted) throw limits.signal.reason;
    if (timeout.aborted) {
      throw new StorageError(`Fetching ${url.href} timed out after ${limits.timeoutMs} ms.`, {
        cause: error,
        details: { url: url.href, timeoutMs: limits.timeoutMs },
      });
    }
    if (error instanceof ValidationError || error instanceof StorageError) throw error;
    throw new StorageError(`Fetching ${url.href} failed while ${what}: ${(error as Error)?.message}`, {
      cause: error,
      details: { url: url.href },
    });
  };

  let current = url;
  let response: Response | undefined;
  for (let hop = 0; ; hop++) {
    try {
      response = await limits.fetch(current, {
        method: 'GET',
        redirect: 'manual',
        signal,
        headers: { accept: ACCEPT, 'user-agent': limits.userAgent },
      });
    } catch (error) {
      return fail(error, 'connecting');
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) break;
    await response.body?.cancel().catch(() => {});
    if (hop >= limits.maxRedirects) {
      throw new StorageError(`Fetching ${url.href} followed more than ${limits.maxRedirects} redirects.`, {
        details: { url: url.href },
      });
    }
    current = parseHttpUrl(new URL(location, current));
  }

  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new StorageError(
      `Fetching ${current.href} failed: HTTP ${response.status} ${response.statusText}`.trim(),
      { details: { url: current.href, status: response.status } },
    );
  }
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(current.href, limits.maxBytes);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readLimited(response, limits.maxBytes, current.href);
  } catch (error) {
    return fail(error, 'reading the body');
  }
  return {
    bytes,
    contentType: response.headers.get('content-type') ?? undefined,
    finalUrl: current.href,
  };
}

function tooLarge(uri: string, maxBytes: number): ValidationError {
  return new ValidationError(`${uri} is larger than the ${maxBytes}-byte limit.`, {
    details: { uri, maxBytes },
  });
}

async function readLimited(response: Response, maxBytes: number, uri: string): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(uri, maxBytes);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
