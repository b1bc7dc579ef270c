import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { Page } from '../components/ui';
import { api } from '../context';
import { html } from '../html';
import type { ConsoleSession } from '../session';
import { currentChatSession, parseTranscript } from './chat-frames';
import { ChatSocket } from './chat-socket';
import { frameOf } from './frame-of';
import { applyFrame, type ChatItem, type ChatState, emptyChat, note, sent, withTranscript } from './chat-state';
import './chat.css';

/** The commands the input box understands; anything else starting with `/` goes to the gateway as a command. */
const COMMANDS_HELP = '/new starts a new conversation · /compact [instructions] summarises it · /usage shows your spend';

function Approval(props: { item: ChatItem; onDecide: (id: string, decision: 'allow' | 'deny', extra: { always?: boolean; mode?: string }) => void }) {
  const a = props.item.approval;
  if (!a) return null;
  const pending = a.state === 'pending';
  return html`<li class="chat-line chat-approval" data-testid="chat-approval" data-approval=${a.id} data-state=${a.state}>
    <p class="chat-approval-head">Approval needed: <strong>${a.tool}</strong></p>
    <pre class="chat-approval-summary">${props.item.text}</pre>
    ${
      pending
        ? html`<div class="chat-approval-actions">
            ${
              a.choices && a.choices.length > 0
                ? a.choices.map(
                    (m) =>
                      html`<button type="button" data-testid=${`chat-approve-${a.id}-${m}`} onClick=${() => props.onDecide(a.id, 'allow', { mode: m })}>
                        Proceed (${m})
                      </button>`,
                  )
                : html`<button type="button" class="primary" data-testid=${`chat-approve-${a.id}`} onClick=${() => props.onDecide(a.id, 'allow', {})}>Allow</button>
                    <button type="button" data-testid=${`chat-always-${a.id}`} onClick=${() => props.onDecide(a.id, 'allow', { always: true })}>
                      Always allow
                    </button>`
            }
            <button type="button" class="danger" data-testid=${`chat-deny-${a.id}`} onClick=${() => props.onDecide(a.id, 'deny', {})}>Deny</button>
          </div>`
        : html`<p class="chat-approval-state" data-testid=${`chat-approval-state-${a.id}`}>${a.state}${a.by ? ` by ${a.by}` : ''}</p>`
    }
    ${a.note ? html`<p class="error">${a.note}</p>` : null}
  </li>`;
}

function Line(props: { item: ChatItem; onDecide: (id: string, decision: 'allow' | 'deny', extra: { always?: boolean; mode?: string }) => void }) {
  const { item } = props;
  if (item.role === 'approval') return html`<${Approval} item=${item} onDecide=${props.onDecide} />`;
  return html`<li
    class=${`chat-line chat-${item.role}${item.streaming ? ' chat-streaming' : ''}`}
    data-testid="chat-message"
    data-role=${item.role}
    data-turn=${item.turnId ?? ''}
    data-streaming=${item.streaming ? 'true' : 'false'}
  >
    <span class="chat-who">${item.role === 'user' ? 'You' : item.role === 'assistant' ? 'Assistant' : ''}</span>
    <div class="chat-text">${item.text}</div>
  </li>`;
}

/** The chat itself, for a member session with web chat on. */
function Chat(props: { session: ConsoleSession }) {
  const [state, setState] = useState<ChatState>(emptyChat);
  const [status, setStatus] = useState<{ s: 'connecting' | 'open' | 'closed'; reason?: string }>({ s: 'connecting' });
  const [text, setText] = useState('');
  const stateRef = useRef(state);
  stateRef.current = state;
  const sock = useRef<ChatSocket | null>(null);
  const loading = useRef(false);
  const again = useRef(false);
  const loadHistoryRef = useRef<(() => Promise<void>) | null>(null);
  const logRef = useRef<HTMLOListElement>(null);

  const loadHistory = useCallback(async () => {
    // One read at a time; a call during a read asks for one more read after it (a final may have come meanwhile).
    if (loading.current) {
      again.current = true;
      return;
    }
    loading.current = true;
    try {
      const current = currentChatSession(await api.get('/me/sessions', { limit: 50 }));
      if (!current) return setState((s) => ({ ...s, stale: false }));
      const entries = parseTranscript(await api.get(`/me/sessions/${encodeURIComponent(current.id)}/transcript`));
      setState((s) => withTranscript(s, entries));
    } catch (err) {
      setState((s) => note({ ...s, stale: false }, `Could not load the conversation: ${err instanceof Error ? err.message : String(err)}`, 'error'));
    } finally {
      loading.current = false;
      if (again.current) {
        again.current = false;
        void loadHistoryRef.current?.();
      }
    }
  }, []);
  loadHistoryRef.current = loadHistory;

  useEffect(() => {
    const s = new ChatSocket({
      onFrame: (f) => setState((st) => applyFrame(st, f)),
      onStatus: (st, reason) => setStatus({ s: st, ...(reason ? { reason } : {}) }),
      cursor: () => stateRef.current.cursor,
      onReconnected: () => void loadHistory(),
      // A 401 here reaches the app's sign-out handler (the API client's onUnauthorized); other errors wait for the next try.
      checkSession: () => void api.get('/auth/session').catch(() => undefined),
    });
    sock.current = s;
    // The socket first, then the history: a final that lands in between is not lost (it is kept by turn).
    s.start();
    void loadHistory();
    return () => s.stop();
  }, [loadHistory]);

  // A final of a turn the page did not know (another tab, or replayed after a gap): read the history again.
  useEffect(() => {
    if (state.stale) void loadHistory();
  }, [state.stale, loadHistory]);

  const count = state.items.length;
  useEffect(() => {
    const el = logRef.current;
    if (el && typeof el.scrollTo === 'function') el.scrollTo({ top: el.scrollHeight });
  }, [count, state.items.at(-1)?.text]);

  const decide = (approvalId: string, decision: 'allow' | 'deny', extra: { always?: boolean; mode?: string }) => {
    if (!sock.current?.send({ type: 'approve', approvalId, decision, ...extra })) {
      setState((st) => note(st, 'Not connected: the answer was not sent. Try again once the chat is connected.', 'error'));
    }
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const t = text;
    if (t.trim() === '') return;
    const clientId = crypto.randomUUID();
    const frame = frameOf(t, clientId);
    if (!sock.current?.send(frame)) {
      setState((st) => note(st, 'Not connected: your message was not sent.', 'error'));
      return;
    }
    if (frame.type === 'message') setState((st) => sent(st, clientId, t));
    else setState((st) => sent(st, clientId, t.trim()));
    setText('');
  };

  const onKey = (e: KeyboardEvent) => {
    // Enter sends, Shift+Enter adds a line.
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
  };

  return html`<div class="chat">
    <p class="muted chat-who-am-i">Signed in as ${props.session.name}</p>
    <p class=${`chat-status chat-status-${status.s}`} data-testid="chat-status" data-state=${status.s} role="status">
      ${status.s === 'open' ? 'Connected' : status.s === 'connecting' ? 'Connecting…' : `Disconnected: ${status.reason ?? ''}`}
    </p>
    <ol class="chat-log" data-testid="chat-log" ref=${logRef} aria-live="polite">
      ${state.items.map((item) => html`<${Line} key=${item.key} item=${item} onDecide=${decide} />`)}
    </ol>
    <form class="chat-form" onSubmit=${submit}>
      <label class="visually-hidden" for="chat-input">Message</label>
      <textarea
        id="chat-input"
        data-testid="chat-input"
        rows="2"
        maxlength="100000"
        placeholder="Message the assistant (Enter to send)"
        value=${text}
        onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown=${onKey}
      ></textarea>
      <button type="submit" class="primary" data-testid="chat-send" disabled=${status.s !== 'open'}>Send</button>
    </form>
    <p class="muted chat-help">${COMMANDS_HELP}</p>
  </div>`;
}

/** The members' page at `/chat`: their own conversation on the `default` WebSocket account. */
export function ChatPage(props: { session: ConsoleSession }) {
  const { session } = props;
  return html`<${Page} name="chat" title="Chat">
    ${
      session.webChat === false
        ? html`<p class="notice" data-testid="webchat-off">Web chat is off: this gateway has no WebSocket account named default.</p>`
        : html`<${Chat} session=${session} />`
    }
  <//>`;
}
