import { KiokuError } from '@kioku/core';

/**
 * The encoder's model could not be loaded: its files are missing or unreadable (`modelDirectory` names a
 * folder without `model.json`, its weight shards or `vocab.json`), or they are not a model the encoder can
 * run. Code `STORAGE`; `details.modelDirectory` says where it looked. Nothing was embedded or stored.
 */
export class LocalModelLoadError extends KiokuError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super('STORAGE', message, options);
  }
}

export function isLocalModelLoadError(error: unknown): error is LocalModelLoadError {
  return error instanceof LocalModelLoadError;
}
