export { telegramModule } from './module.js';
export { telegramAccountSchema, type TelegramAccountConfig } from './account.js';
export { TelegramChannel } from './telegram-channel.js';
export { ALLOWED_UPDATES, MAX_MESSAGE_CHARS, webhookPath } from './options.js';
export { chunkText, draftPreview } from './chunk.js';
export { escapeHtml, toTelegramHtml } from './format.js';
export { approvalCallbackData } from './approvals.js';
export { scrubToken } from './errors.js';
