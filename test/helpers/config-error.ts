// Runs on: main thread (tap). Owns: configError, the ConfigError a call throws,
// shared by the tests of configuration files.
import { ConfigError } from '../../lib/errors.js';

/** The ConfigError `fn` throws (anything else it throws is rethrown; nothing thrown fails). */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError, got none');
}
