import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { errorText } from '../components/ui';
import { api } from '../context';
import { html } from '../html';
import { type ConsoleSession, signIn } from '../session';

function signInError(err: unknown): string {
  if (err instanceof ApiError && err.status === 401) return 'That token is wrong, revoked or expired.';
  if (err instanceof ApiError && err.status === 429) return 'Too many failed sign-ins from this address: wait a few minutes and try again.';
  return errorText(err);
}

/** Sign-in: the token is posted once to the auth route, then cleared from the form; it is never stored or put in a URL. */
export function SignInPage(props: { onSignedIn: (s: ConsoleSession) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const field = input.current;
    if (!field) return;
    const token = field.value.trim();
    if (token === '') {
      setError(new Error('Paste an operator token (swb_o_…) or a client token (swb_c_…).'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const session = await signIn(api, token);
      field.value = '';
      props.onSignedIn(session);
    } catch (err) {
      field.value = '';
      setError(err);
      field.focus();
    } finally {
      setBusy(false);
    }
  };

  return html`<main class="signin" data-page="signin">
    <form class="card signin-card" onSubmit=${submit} method="post" action="#" autocomplete="off">
      <h1>Switchboard</h1>
      <p class="muted">Sign in with an operator token for the console, or with your client token for the web chat.</p>
      <label for="signin-token">Token</label>
      <input
        id="signin-token"
        ref=${input}
        type="password"
        name="token"
        autocomplete="off"
        spellcheck=${false}
        autocapitalize="off"
        required
        data-testid="signin-token"
      />
      ${error ? html`<p class="error" role="alert" data-testid="signin-error">${signInError(error)}</p>` : null}
      <button type="submit" class="primary" disabled=${busy} data-testid="signin-submit">${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  </main>`;
}
