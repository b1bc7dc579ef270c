export * from './fake-slack-types.js';
export * from './fake-slack.js';
export * from './slack-delivery.js';
export * from './slack-events.js';
export { normalizeSlackParams, SLACK_MAX_TEXT } from './slack-web-api.js';
export type { SlackFileObject, SlackUploadedFile } from './slack-files.js';
