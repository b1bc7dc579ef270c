import { Page } from '../components/ui';
import { html } from '../html';
import type { ConsoleSession } from '../session';

/**
 * The members' page at `/chat` (the web chat itself is built by the console-chat slice in this
 * folder; the router mounts `ChatPage` for client sessions).
 */
export function ChatPage(props: { session: ConsoleSession }) {
  const { session } = props;
  return html`<${Page} name="chat" title="Chat">
    ${
      session.webChat === false
        ? html`<p class="notice" data-testid="webchat-off">Web chat is off: this gateway has no WebSocket account.</p>`
        : html`<p class="muted">Signed in as ${session.name}.</p>`
    }
  <//>`;
}
