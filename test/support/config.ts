/** The problems loadConfig reports for `env` (it must refuse it with a ConfigError). */
import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

export function configProblems(env: Record<string, string>): ConfigError['problems'] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
