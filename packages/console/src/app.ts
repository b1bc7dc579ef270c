import { useEffect, useRef, useState } from 'preact/hooks';
import { ChatPage } from './chat/index';
import { ErrorNote, errorText, Link } from './components/ui';
import { api, hub, navigate, onUnauthorized } from './context';
import type { StreamState } from './events';
import { html } from './html';
import { useRoute } from './hooks';
import { ApprovalsPage } from './pages/approvals';
import { AuditPage } from './pages/audit';
import { NotFoundPage } from './pages/not-found';
import { OverviewPage } from './pages/overview';
import { PairingPage } from './pages/pairing';
import { PeoplePage } from './pages/people';
import { PersonPage } from './pages/person';
import { PoliciesPage } from './pages/policies';
import { SessionPage } from './pages/session';
import { SessionsPage } from './pages/sessions';
import { SignInPage } from './pages/signin';
import { UsagePage } from './pages/usage';
import { OPERATOR_NAV, type Route } from './router';
import { type ConsoleSession, loadSession, signOut } from './session';

function OperatorPage(props: { route: Route; session: ConsoleSession }) {
  const { route, session } = props;
  switch (route.name) {
    case 'overview':
      return html`<${OverviewPage} session=${session} />`;
    case 'approvals':
      return html`<${ApprovalsPage} session=${session} />`;
    case 'pairing':
      return html`<${PairingPage} session=${session} />`;
    case 'people':
      return html`<${PeoplePage} session=${session} />`;
    case 'person':
      return html`<${PersonPage} session=${session} id=${route.params.id} />`;
    case 'policies':
      return html`<${PoliciesPage} session=${session} />`;
    case 'sessions':
      return html`<${SessionsPage} session=${session} />`;
    case 'session':
      return html`<${SessionPage} session=${session} id=${route.params.id} />`;
    case 'usage':
      return html`<${UsagePage} session=${session} />`;
    case 'audit':
      return html`<${AuditPage} session=${session} />`;
    default:
      return html`<${NotFoundPage} />`;
  }
}

function StreamBadge() {
  const [state, setState] = useState<StreamState>('closed');
  useEffect(() => hub.onState(setState), []);
  const label = state === 'live' ? 'Live' : state === 'connecting' ? 'Connecting…' : 'Offline';
  return html`<span class=${`stream stream-${state}`} data-testid="stream-state" data-state=${state} title="Live updates">${label}</span>`;
}

function Shell(props: { session: ConsoleSession; route: Route; onSignOut: () => void; error: unknown }) {
  const { session, route } = props;
  const [menuOpen, setMenuOpen] = useState(false);
  const operator = session.kind === 'operator';
  const active = route.name === 'person' ? 'people' : route.name === 'session' ? 'sessions' : route.name;
  return html`<div class="shell">
    <a class="skip" href="#main">Skip to content</a>
    <header class="topbar">
      <span class="brand">Switchboard</span>
      ${operator ? html`<${StreamBadge} />` : null}
      <button
        type="button"
        class="menu-toggle"
        aria-expanded=${menuOpen}
        aria-controls="nav"
        data-testid="nav-toggle"
        onClick=${() => setMenuOpen(!menuOpen)}
      >
        Menu
      </button>
      <span class="who" data-testid="signed-in-as">${session.name}${session.role ? ` (${session.role})` : ''}</span>
      <button type="button" data-testid="signout" onClick=${props.onSignOut}>Sign out</button>
    </header>
    <nav id="nav" class=${menuOpen ? 'nav open' : 'nav'} aria-label="Pages" onClick=${() => setMenuOpen(false)}>
      ${
        operator
          ? OPERATOR_NAV.map(
              (item) => html`<${Link} key=${item.path} to=${item.path} testid=${`nav-${item.page}`} current=${active === item.page}>${item.label}<//>`,
            )
          : html`<${Link} to="/chat" testid="nav-chat" current=${true}>Chat<//>`
      }
    </nav>
    <main id="main" tabindex="-1">
      <${ErrorNote} error=${props.error} testid="session-error" />
      ${operator ? html`<${OperatorPage} route=${route} session=${session} />` : html`<${ChatPage} session=${session} />`}
    </main>
  </div>`;
}

/** The app: sign-in until there is a console session; operators get the console, members the web chat. */
export function App() {
  const route = useRoute();
  const [session, setSession] = useState<ConsoleSession | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    loadSession(api).then(setSession, (err: unknown) => {
      setError(err);
      setSession(null);
    });
    return onUnauthorized(() => setSession(null));
  }, []);

  useEffect(() => {
    if (session) hub.open();
    else hub.close();
  }, [session]);

  // The stream closes for good when the server refuses it (the session expired or its token was
  // revoked): ask whether the session still exists; a 401 returns to the sign-in form.
  const current = useRef(session);
  current.current = session;
  useEffect(
    () =>
      hub.onState((state) => {
        if (state !== 'closed' || !current.current) return;
        loadSession(api).then(
          (s) => {
            if (s === null) setSession(null);
          },
          (err: unknown) => setError(err),
        );
      }),
    [],
  );

  useEffect(() => {
    if (!session) return;
    // Members live on /chat; an operator has no chat page.
    if (session.kind === 'client' && route.name !== 'chat') navigate('/chat', true);
    if (session.kind === 'operator' && route.name === 'chat') navigate('/', true);
  }, [session, route.name]);

  useEffect(() => {
    const label =
      OPERATOR_NAV.find((n) => n.page === route.name)?.label ??
      (route.name === 'chat' ? 'Chat' : route.name === 'person' ? 'Person' : route.name === 'session' ? 'Session' : 'Not found');
    document.title = session ? `${label} · Switchboard` : 'Sign in · Switchboard';
  }, [session, route.name]);

  if (session === undefined) return html`<p class="muted boot" aria-live="polite">Loading…</p>`;
  if (session === null) {
    return html`<div>
      ${error ? html`<div class="boot"><${ErrorNote} error=${error} testid="boot-error" /></div>` : null}
      <${SignInPage}
        onSignedIn=${(s: ConsoleSession) => {
          setError(null);
          setSession(s);
        }}
      />
    </div>`;
  }
  const onSignOut = () => {
    signOut(api).then(
      () => setSession(null),
      (err: unknown) => {
        setError(new Error(`Sign-out failed: ${errorText(err)}`));
        setSession(null);
      },
    );
  };
  return html`<${Shell} session=${session} route=${route} onSignOut=${onSignOut} error=${error} />`;
}
