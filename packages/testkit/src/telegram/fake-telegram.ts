import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { appendRunLog } from '../run-log.js';
import { faultError, TgApiError } from './api-error.js';
import { BotState, type PendingPoll } from './bot-state.js';
import type { FakeTelegram, TgCallMatcher } from './fake-telegram-api.js';
import {
  buildCallbackQuery,
  mentionFields,
  storeUserMessage,
  type TgButtonPress,
  type TgInboundMessage,
  type TgMentionMessage,
  type TgReplyMessage,
} from './inject.js';
import { FILE_METHODS } from './file-methods.js';
import { MESSAGE_METHODS } from './message-methods.js';
import { commandsKey, OTHER_METHODS } from './other-methods.js';
import type { MethodHandler } from './params.js';
import { clearPolls, handleGetUpdates, stallPolling, wakePolls } from './polling.js';
import { describeMatcher, toPredicate, toSent } from './records.js';
import { loggableParams, parsePath, readParams, sendJson } from './request.js';
import type {
  FakeTelegramBotSpec,
  FakeTelegramOptions,
  TgBotUser,
  TgCall,
  TgEnvelope,
  TgEvent,
  TgFault,
  TgFaultOptions,
  TgSentDocument,
  TgSentMessage,
  TgUpdate,
} from './types.js';
import { listenLoopback } from '../loopback.js';

/** The token of the default bot (not a canary: safe to appear in test output). */
export const DEFAULT_TELEGRAM_TOKEN = '1000001:TESTfakeTelegramTokenNotASecret00001';

const METHODS: Record<string, MethodHandler> = { ...MESSAGE_METHODS, ...OTHER_METHODS, ...FILE_METHODS };

interface FaultEntry {
  method: string;
  fault: TgFault;
  remaining: number;
  skip: number;
  token?: string;
}

class FakeTelegramServer implements FakeTelegram {
  readonly calls: TgCall[] = [];
  readonly events: TgEvent[] = [];
  apiRoot = '';
  port = 0;
  private readonly bots = new Map<string, BotState>();
  private readonly faults: FaultEntry[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly server: Server;
  private readonly source: string;
  private callbackSeq = 0;
  private closing = false;
  private readonly emit = (bot: BotState, type: TgEvent['type'], call?: number, detail?: string): void => {
    if (this.closing) return;
    this.events.push({
      seq: this.events.length + 1,
      type,
      bot: bot.user.username,
      at: new Date(),
      ...(call !== undefined ? { call } : {}),
      ...(detail !== undefined ? { detail } : {}),
    });
    this.changed();
  };

  constructor(private readonly opts: FakeTelegramOptions) {
    this.source = opts.logSource ?? 'fake-telegram';
    for (const spec of opts.bots ?? [{ token: DEFAULT_TELEGRAM_TOKEN, username: 'switchboard_test_bot', first_name: 'Switchboard Test' }]) this.addBot(spec);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        appendRunLog(this.source, `internal error: ${err instanceof Error ? err.message : String(err)}`);
        if (!res.headersSent) sendJson(res, 500, { ok: false, error_code: 500, description: 'Internal Server Error' });
        else res.destroy();
      });
    });
  }

  async listen(): Promise<void> {
    this.port = await listenLoopback(this.server);
    this.apiRoot = `http://127.0.0.1:${this.port}`;
  }

  addBot(spec: FakeTelegramBotSpec): TgBotUser {
    const state = new BotState(spec);
    this.bots.set(spec.token, state);
    return state.user;
  }

  botInfo(token: string): TgBotUser {
    return { ...this.bot(token).user };
  }

  sendUserMessage(token: string, msg: TgInboundMessage): TgUpdate {
    const bot = this.bot(token);
    return this.queue(bot, { message: structuredClone(storeUserMessage(bot, msg)) });
  }

  mentionBot(token: string, msg: TgMentionMessage): TgUpdate {
    return this.sendUserMessage(token, mentionFields(this.bot(token), msg));
  }

  replyToBot(token: string, msg: TgReplyMessage): TgUpdate {
    const { to, ...rest } = msg;
    return this.sendUserMessage(token, { ...rest, chat: to.chat, reply_to_message: { message_id: to.message_id } });
  }

  pressButton(token: string, press: TgButtonPress): TgUpdate {
    const bot = this.bot(token);
    return this.queue(bot, { callback_query: buildCallbackQuery(bot, press, `cbq_test_${++this.callbackSeq}`) });
  }

  injectUpdate(token: string, payload: Record<string, unknown>): TgUpdate {
    return this.queue(this.bot(token), payload);
  }

  pendingUpdates(token: string): TgUpdate[] {
    return [...this.bot(token).updates];
  }

  failNext(method: string, fault: TgFault, opts: TgFaultOptions = {}): void {
    const entry: FaultEntry = { method: method.toLowerCase(), fault, remaining: opts.times ?? 1, skip: opts.skip ?? 0 };
    if (opts.token !== undefined) entry.token = opts.token;
    this.faults.push(entry);
  }

  stallPolling(token: string): void {
    stallPolling(this.bot(token), this.emit);
  }

  waitForStalledPoll(token?: string, timeoutMs = 5000, since = 0): Promise<TgEvent> {
    const bot = token === undefined ? undefined : this.bot(token).user.username;
    return this.waitForEvent((e) => e.type === 'poll-stalled' && (bot === undefined || e.bot === bot), timeoutMs, since);
  }

  waitForClosedStalledPoll(token?: string, timeoutMs = 5000, since = 0): Promise<TgEvent> {
    const bot = token === undefined ? undefined : this.bot(token).user.username;
    return this.waitForEvent((e) => e.type === 'stalled-poll-closed' && (bot === undefined || e.bot === bot), timeoutMs, since);
  }

  waitForEvent(match: (e: TgEvent) => boolean, timeoutMs = 5000, since = 0): Promise<TgEvent> {
    return this.waitUntil(() => this.events.find((e) => e.seq > since && match(e)), timeoutMs, 'a matching event');
  }

  waitFor(match: TgCallMatcher, timeoutMs = 5000, since = 0): Promise<TgCall> {
    const pred = toPredicate(match);
    return this.waitUntil(() => this.calls.find((c) => c.seq > since && pred(c)), timeoutMs, `a call matching ${describeMatcher(match)}`);
  }

  waitForAnswered(match: TgCallMatcher, timeoutMs = 5000, since = 0): Promise<TgCall> {
    const pred = toPredicate(match);
    const found = () => this.calls.find((c) => c.seq > since && c.response !== undefined && pred(c));
    return this.waitUntil(found, timeoutMs, `an answered call matching ${describeMatcher(match)}`);
  }

  sent(token: string, chatId: number, opts: { includeDeleted?: boolean } = {}): TgSentMessage[] {
    const chat = this.bot(token).chats.get(chatId);
    const mine = [...(chat?.messages.values() ?? [])].filter((m) => m.fromBot && (opts.includeDeleted || !m.deleted));
    return mine.map(toSent);
  }

  documents(token: string, chatId?: number): TgSentDocument[] {
    const bot = this.bot(token);
    const out: TgSentDocument[] = [];
    for (const chat of bot.chats.values()) {
      if (chatId !== undefined && chat.chat.id !== chatId) continue;
      for (const m of chat.messages.values()) {
        const doc = m.message.document;
        if (!m.fromBot || m.deleted || !doc) continue;
        out.push({
          chat_id: chat.chat.id,
          message_id: m.message.message_id,
          document: { ...doc },
          ...(m.message.caption !== undefined ? { caption: m.message.caption } : {}),
          ...(m.message.message_thread_id !== undefined ? { message_thread_id: m.message.message_thread_id } : {}),
          content: Buffer.from(bot.files.get(doc.file_id)?.content ?? Buffer.alloc(0)),
        });
      }
    }
    return out;
  }

  chatActions(token: string, chatId?: number) {
    return this.bot(token).chatActions.filter((a) => chatId === undefined || a.chat_id === chatId);
  }

  callbackAnswers(token: string) {
    return [...this.bot(token).callbackAnswers];
  }

  commands(token: string, scope?: Record<string, unknown>, languageCode?: string): unknown[] | undefined {
    return this.bot(token).commands.get(commandsKey(scope, languageCode));
  }

  webhook(token: string) {
    return this.bot(token).webhook;
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const bot of this.bots.values()) clearPolls(bot);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private bot(token: string): BotState {
    const bot = this.bots.get(token);
    if (!bot) throw new Error('fake-telegram: no bot with that token (register it in opts.bots or with addBot)');
    return bot;
  }

  private queue(bot: BotState, payload: Record<string, unknown>): TgUpdate {
    const update = bot.queue(payload);
    this.emit(bot, 'update-queued', undefined, `update_id=${update.update_id}`);
    wakePolls(bot, this.emit);
    return structuredClone(update);
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  private waitUntil<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    const now = find();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const hit = find();
        if (hit === undefined) return;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve(hit);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`fake-telegram: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  private takeFault(method: string, token: string): TgFault | undefined {
    const i = this.faults.findIndex((f) => (f.method === method || f.method === '*') && (f.token === undefined || f.token === token));
    const entry = this.faults[i];
    if (!entry) return undefined;
    if (entry.skip > 0) {
      entry.skip--;
      return undefined;
    }
    if (--entry.remaining <= 0) this.faults.splice(i, 1);
    return entry.fault;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = parsePath(req.url ?? '/');
    if (path.kind === 'file') return this.serveFile(path.token, path.filePath, res);
    const read = await readParams(req);
    const params = 'params' in read ? read.params : {};
    const method = path.kind === 'method' ? path.method : '(no method)';
    const bot = path.kind === 'method' ? this.bots.get(path.token) : undefined;
    const call: TgCall = { seq: this.calls.length + 1, bot: bot?.user.username, method, params, at: new Date() };
    this.calls.push(call);
    appendRunLog(this.source, JSON.stringify({ call: call.seq, bot: call.bot ?? '<unknown token>', method, params: loggableParams(params) }));
    this.changed();
    const answer = (status: number, body: unknown): void => {
      const json = sendJson(res, status, body);
      call.status = status;
      call.response = JSON.parse(json) as TgEnvelope;
      const desc = call.response.ok ? '' : ` ${call.response.description ?? ''}`;
      appendRunLog(this.source, `call ${call.seq} ${method} -> ${status}${desc}`);
      this.changed();
    };
    const fail = (e: TgApiError): void => answer(e.code, e.toEnvelope());
    if (path.kind !== 'method') return fail(new TgApiError(404, 'Not Found'));
    if (!bot) return fail(new TgApiError(401, 'Unauthorized'));
    if ('error' in read) return fail(new TgApiError(read.error.startsWith('Request Entity') ? 413 : 400, read.error));
    const lower = method.toLowerCase();
    const fault = this.takeFault(lower, path.token);
    if (fault) {
      this.emit(bot, 'fault-injected', call.seq, `${method}: ${fault.drop ? 'drop' : (fault.status ?? 500)}`);
      if (fault.drop) return void res.destroy();
      if (fault.envelope !== undefined) {
        const status = fault.status ?? 400;
        sendJson(res, status, fault.envelope);
        call.status = status;
        appendRunLog(this.source, `call ${call.seq} ${method} -> ${status} (raw envelope)`);
        return this.changed();
      }
      if (fault.rawBody !== undefined) {
        res.writeHead(fault.status ?? 502, { 'content-type': 'text/html' }).end(fault.rawBody);
        call.status = fault.status ?? 502;
        return this.changed();
      }
      return fail(faultError(fault));
    }
    try {
      if (lower === 'getupdates') {
        const gone = (): boolean => res.destroyed || req.socket.destroyed;
        const poll: PendingPoll = { seq: call.seq, limit: 100, stalled: false, answered: false, answer, gone };
        return handleGetUpdates(bot, params, poll, (fn) => res.once('close', fn), this.emit);
      }
      const handler = METHODS[lower];
      if (!handler) return fail(new TgApiError(404, 'Not Found: method not found'));
      const uploads = 'uploads' in read ? read.uploads : undefined;
      const out = handler({ bot, params, unknownChats: this.opts.unknownChats ?? 'create', ...(uploads ? { uploads } : {}) });
      answer(200, { ok: true, result: out.result, ...(out.description !== undefined ? { description: out.description } : {}) });
    } catch (err) {
      if (err instanceof TgApiError) return fail(err);
      throw err;
    }
  }

  private serveFile(token: string, filePath: string, res: ServerResponse): void {
    const bot = this.bots.get(token);
    const file = bot ? [...bot.files.values()].find((f) => f.file_path === filePath) : undefined;
    appendRunLog(this.source, `file download ${bot ? bot.user.username : '<unknown token>'} ${filePath} -> ${file?.content ? 200 : 404}`);
    if (!file?.content) return void sendJson(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.content.length }).end(file.content);
  }
}

/** Starts a fake Telegram Bot API on 127.0.0.1 with a free port. */
export async function startFakeTelegram(opts: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const fake = new FakeTelegramServer(opts);
  await fake.listen();
  return fake;
}
