export { TELEGRAM_DESCRIPTIONS } from './api-error.js';
export type { TgCallMatcher, FakeTelegram } from './fake-telegram-api.js';
export { DEFAULT_TELEGRAM_TOKEN, startFakeTelegram } from './fake-telegram.js';
export { detectEntities, formatMessageText, parseHtml, parseLegacyMarkdown, parseMarkdownV2, type ParseResult } from './format.js';
export type { TgButtonPress, TgInboundFile, TgInboundMessage, TgMentionMessage, TgReplyMessage } from './inject.js';
export { MAX_MESSAGE_LENGTH as TELEGRAM_MAX_MESSAGE_LENGTH } from './message-methods.js';
export type { WebhookState } from './bot-state.js';
export * from './types.js';
