import { badRequest } from './api-error.js';
import type { WebhookState } from './bot-state.js';
import { arr, bool, int, obj, resolveChat, type MethodContext, type MethodHandler } from './params.js';

/** `sendChatAction` actions the Bot API accepts. */
export const CHAT_ACTIONS = new Set([
  'typing',
  'upload_photo',
  'record_video',
  'upload_video',
  'record_voice',
  'upload_voice',
  'upload_document',
  'choose_sticker',
  'find_location',
  'record_video_note',
  'upload_video_note',
]);

/** Files above this size cannot be fetched with `getFile` (20 MB). */
export const MAX_GET_FILE_SIZE = 20 * 1024 * 1024;

/** The key commands are stored under: scope (JSON) plus language code. */
export function commandsKey(scope: unknown, languageCode: unknown): string {
  const s = obj(scope) ?? { type: 'default' };
  return `${JSON.stringify(s)}|${typeof languageCode === 'string' ? languageCode : ''}`;
}

const setWebhook: MethodHandler = ({ bot, params }) => {
  const url = typeof params.url === 'string' ? params.url : '';
  if (url === '') {
    const had = bot.webhook !== undefined;
    bot.webhook = undefined;
    return { result: true, description: had ? 'Webhook was deleted' : 'Webhook is already deleted' };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest('bad webhook: Failed to resolve host: Name or service not known');
  }
  if (parsed.protocol !== 'https:') throw badRequest('bad webhook: An HTTPS URL must be provided for webhook');
  if (parsed.port !== '' && !['80', '88', '443', '8443'].includes(parsed.port)) {
    throw badRequest('bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443');
  }
  const secret = params.secret_token;
  if (secret !== undefined && (typeof secret !== 'string' || !/^[A-Za-z0-9_-]{1,256}$/.test(secret))) {
    throw badRequest('bad webhook: secret token contains unallowed characters');
  }
  const hook: WebhookState = { url };
  if (typeof secret === 'string') hook.secret_token = secret;
  const allowed = arr(params.allowed_updates);
  if (allowed) {
    hook.allowed_updates = allowed.map(String);
    bot.allowedUpdates = allowed.length > 0 ? hook.allowed_updates : undefined;
  }
  const maxConnections = int(params.max_connections);
  if (maxConnections !== undefined) hook.max_connections = maxConnections;
  if (bool(params.drop_pending_updates)) bot.dropPending();
  const same = bot.webhook?.url === url;
  bot.webhook = hook;
  return { result: true, description: same ? 'Webhook is already set' : 'Webhook was set' };
};

const deleteWebhook: MethodHandler = ({ bot, params }) => {
  const had = bot.webhook !== undefined;
  bot.webhook = undefined;
  if (bool(params.drop_pending_updates)) bot.dropPending();
  return { result: true, description: had ? 'Webhook was deleted' : 'Webhook is already deleted' };
};

const getWebhookInfo: MethodHandler = ({ bot }) => {
  const hook = bot.webhook;
  const info: Record<string, unknown> = { url: hook?.url ?? '', has_custom_certificate: false, pending_update_count: bot.updates.length };
  if (hook?.max_connections !== undefined) info.max_connections = hook.max_connections;
  if (hook?.allowed_updates !== undefined) info.allowed_updates = hook.allowed_updates;
  return { result: info };
};

const sendChatAction: MethodHandler = (ctx) => {
  const chat = resolveChat(ctx);
  const action = ctx.params.action;
  if (action === undefined || action === '') throw badRequest('action is empty');
  if (typeof action !== 'string' || !CHAT_ACTIONS.has(action)) throw badRequest('wrong parameter action in request');
  ctx.bot.chatActions.push({ chat_id: chat.chat.id, action, at: new Date() });
  return { result: true };
};

const answerCallbackQuery: MethodHandler = ({ bot, params }) => {
  const id = typeof params.callback_query_id === 'string' ? params.callback_query_id : String(params.callback_query_id ?? '');
  const query = bot.callbackQueries.get(id);
  if (!query || query.answered) throw badRequest('query is too old and response timeout expired or query ID is invalid');
  if (typeof params.text === 'string' && params.text.length > 200) throw badRequest('MESSAGE_TOO_LONG');
  query.answered = true;
  const cacheTime = int(params.cache_time);
  bot.callbackAnswers.push({
    callback_query_id: id,
    ...(typeof params.text === 'string' ? { text: params.text } : {}),
    ...(params.show_alert !== undefined ? { show_alert: bool(params.show_alert) } : {}),
    ...(typeof params.url === 'string' ? { url: params.url } : {}),
    ...(cacheTime !== undefined ? { cache_time: cacheTime } : {}),
    at: new Date(),
  });
  return { result: true };
};

const setMyCommands: MethodHandler = ({ bot, params }) => {
  const commands = arr(params.commands);
  if (!commands) throw badRequest('parameter "commands" is required');
  if (commands.length > 100) throw badRequest('BOT_COMMANDS_TOO_MUCH');
  for (const c of commands) {
    const cmd = obj(c);
    if (!cmd || typeof cmd.command !== 'string' || !/^[a-z0-9_]{1,32}$/.test(cmd.command)) throw badRequest('BOT_COMMAND_INVALID');
    if (typeof cmd.description !== 'string' || cmd.description.length < 1 || cmd.description.length > 256) {
      throw badRequest('BOT_COMMAND_DESCRIPTION_INVALID');
    }
  }
  bot.commands.set(commandsKey(params.scope, params.language_code), commands);
  return { result: true };
};

const getMyCommands: MethodHandler = ({ bot, params }) => ({ result: bot.commands.get(commandsKey(params.scope, params.language_code)) ?? [] });

const deleteMyCommands: MethodHandler = ({ bot, params }) => {
  bot.commands.delete(commandsKey(params.scope, params.language_code));
  return { result: true };
};

const getFile: MethodHandler = ({ bot, params }) => {
  const file = typeof params.file_id === 'string' ? bot.files.get(params.file_id) : undefined;
  if (!file) throw badRequest('invalid file_id');
  if ((file.file_size ?? 0) > MAX_GET_FILE_SIZE) throw badRequest('file is too big');
  const result: Record<string, unknown> = { file_id: file.file_id, file_unique_id: file.file_unique_id, file_path: file.file_path };
  if (file.file_size !== undefined) result.file_size = file.file_size;
  return { result };
};

/** Handlers of the non-message methods (except `getUpdates`), keyed by lower-cased method name. */
export const OTHER_METHODS: Record<string, MethodHandler> = {
  getme: (ctx: MethodContext) => ({ result: ctx.bot.user }),
  setwebhook: setWebhook,
  deletewebhook: deleteWebhook,
  getwebhookinfo: getWebhookInfo,
  sendchataction: sendChatAction,
  answercallbackquery: answerCallbackQuery,
  setmycommands: setMyCommands,
  getmycommands: getMyCommands,
  deletemycommands: deleteMyCommands,
  getfile: getFile,
};
