import { LogLevel, type Logger } from '@slack/web-api';

/** A @slack/logger Logger that drops everything (the SDKs log expected reconnects and errors at ERROR). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};
