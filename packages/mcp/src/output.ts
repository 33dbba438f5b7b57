/** The error a client gets instead of a result over `maxOutputBytes`. */
export const OUTPUT_TOO_LARGE = 'OUTPUT_TOO_LARGE';

/** The JSON error object (as `executeToolCall` shapes them) for a result over the limit. */
export function tooLarge(what: string, bytes: number, maxBytes: number) {
  return {
    error: {
      code: OUTPUT_TOO_LARGE,
      message:
        `${what} is ${bytes} bytes, over this server's limit of ${maxBytes} bytes per result; nothing was ` +
        'cut. Ask for less (a narrower search, a smaller limit), or start the server with a larger --max-output.',
      details: { bytes, maxBytes },
    },
  };
}
