import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { href, navigate } from '../context';
import { html } from '../html';

/** A link to an app path: a real `<a href>` (keyboard, middle click), navigated with the History API on a plain click. */
export function Link(props: { to: string; children: ComponentChildren; class?: string; testid?: string; current?: boolean }) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to);
  };
  return html`<a
    href=${href(props.to)}
    class=${props.class}
    data-testid=${props.testid}
    aria-current=${props.current ? 'page' : undefined}
    onClick=${onClick}
    >${props.children}</a
  >`;
}

/** The text of an error for a person: the API's message, or the thrown value's. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.status > 0 ? `${err.message} (${err.code})` : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** An error box (role=alert), or nothing. */
export function ErrorNote(props: { error: unknown; testid?: string }) {
  if (props.error === null || props.error === undefined) return null;
  return html`<p class="error" role="alert" data-testid=${props.testid ?? 'error'}>${errorText(props.error)}</p>`;
}

/** A page's root: `data-page` and its heading. */
export function Page(props: { name: string; title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return html`<section class="page" data-page=${props.name} aria-labelledby="page-title">
    <header class="page-head">
      <h1 id="page-title">${props.title}</h1>
      ${props.actions ? html`<div class="page-actions">${props.actions}</div>` : null}
    </header>
    ${props.children}
  </section>`;
}

/** A state word as a coloured badge (`up`, `down`, `pending`, …). */
export function Badge(props: { state: string; testid?: string }) {
  return html`<span class=${`badge badge-${props.state.replace(/[^a-z_-]/gi, '')}`} data-testid=${props.testid}>${props.state}</span>`;
}

/** A button that asks once more before a destructive action. */
export function ConfirmButton(props: { label: string; confirmLabel?: string; onConfirm: () => void; testid: string; disabled?: boolean; danger?: boolean }) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  // Keyboard users land on the confirmation, not on the page's start, when the button is swapped.
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return html`<button type="button" class=${props.danger ? 'danger' : ''} data-testid=${props.testid} disabled=${props.disabled} onClick=${() => setAsking(true)}>
      ${props.label}
    </button>`;
  }
  return html`<span class="confirm">
    <button
      type="button"
      class="danger"
      ref=${confirm}
      data-testid=${`${props.testid}-confirm`}
      onClick=${() => {
        setAsking(false);
        props.onConfirm();
      }}
    >
      ${props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
    </button>
    <button type="button" data-testid=${`${props.testid}-cancel`} onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}

/** A muted line for empty lists. */
export function Empty(props: { children: ComponentChildren; testid?: string }) {
  return html`<p class="empty" data-testid=${props.testid}>${props.children}</p>`;
}

/** "Loading…" while the first load runs. */
export function Loading(props: { when: boolean }) {
  return props.when ? html`<p class="muted" aria-live="polite">Loading…</p>` : null;
}
