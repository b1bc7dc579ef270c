import { expect } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.js';

/** A config file's text parsed as the gateway does (no environment, relative paths under /srv). */
export const parseTestConfig = (text: string) => parseConfig(text, {}, '/srv');

/** The message of the `ConfigError` a config file's text is refused with (fails the test when it is accepted). */
export function configFailure(text: string): string {
  try {
    parseTestConfig(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the config was accepted');
}
