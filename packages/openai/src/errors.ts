import { KiokuError } from '@kioku/core';
import OpenAI from 'openai';

/** What went wrong talking to the endpoint. */
export type EndpointFailure = 'http' | 'timeout' | 'connection' | 'aborted' | 'response';

/**
 * The endpoint failed after the SDK's retries (HTTP error, timeout, lost connection), the call was
 * aborted, or the reply could not be used. Code `STORAGE` (the backend failed); `status` is the HTTP
 * status when there was one.
 */
export class OpenAIEndpointError extends KiokuError {
  readonly status: number | undefined;
  readonly failure: EndpointFailure;

  constructor(
    message: string,
    options: {
      failure: EndpointFailure;
      status?: number;
      cause?: unknown;
      details?: Record<string, unknown>;
    },
  ) {
    super('STORAGE', message, {
      cause: options.cause,
      details: { failure: options.failure, status: options.status, ...options.details },
    });
    this.status = options.status;
    this.failure = options.failure;
  }
}

export function isOpenAIEndpointError(error: unknown): error is OpenAIEndpointError {
  return error instanceof OpenAIEndpointError;
}

/** SDK errors → OpenAIEndpointError; anything else (including our own errors) passes through. */
export function wrapEndpointError(error: unknown, what: string, signal?: AbortSignal): unknown {
  if (error instanceof OpenAIEndpointError) return error;
  if (error instanceof OpenAI.APIUserAbortError || (signal?.aborted && isAbortLike(error))) {
    return new OpenAIEndpointError(`${what} was aborted.`, { failure: 'aborted', cause: error });
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new OpenAIEndpointError(`${what} timed out (after retries).`, {
      failure: 'timeout',
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new OpenAIEndpointError(`${what} failed: could not reach the endpoint (${error.message}).`, {
      failure: 'connection',
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIError) {
    return new OpenAIEndpointError(`${what} failed with HTTP ${error.status}: ${error.message}`, {
      failure: 'http',
      ...(error.status === undefined ? {} : { status: error.status }),
      cause: error,
      details: { requestId: error.requestID ?? undefined },
    });
  }
  return error;
}

function isAbortLike(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'APIUserAbortError');
}
