export { slackModule } from './module.js';
export { slackAccountSchema, type SlackAccountConfig } from './account.js';
export { SlackChannel } from './slack-channel.js';
export { slackPaths } from './http-receiver.js';
export { verifySlackSignature, SLACK_TIMESTAMP_WINDOW_SEC } from './signature.js';
export { mapMessageEvent, slackToPlain } from './inbound.js';
export { toMrkdwn, chunkMrkdwn, escapeMrkdwn, SLACK_CHUNK_LIMIT } from './mrkdwn.js';
