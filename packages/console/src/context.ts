/** The app's singletons: the API client, the live event hub, the base path and navigation. */
import { createApiClient } from './api';
import { createEventHub } from './events';
import { basePathOf, toAppPath, toHref } from './router';

const unauthorizedListeners = new Set<() => void>();

/** The API client of the page. A 401 anywhere means the console session ended. */
export const api = createApiClient({
  onUnauthorized: () => {
    for (const l of unauthorizedListeners) l();
  },
});

/** Called when any API call answers 401. */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** The live event stream. */
export const hub = createEventHub();

/** `console.basePath`: the bundle is served from `<basePath>assets/`. */
export const basePath = basePathOf(import.meta.url);

const navListeners = new Set<(path: string) => void>();

/** The app path of the current location (`/` when the page is outside the base path). */
export function currentPath(): string {
  return toAppPath(window.location.pathname, basePath) ?? '/';
}

/** Goes to an app path with the History API. */
export function navigate(path: string, replace = false): void {
  const href = toHref(path, basePath);
  if (replace) window.history.replaceState(null, '', href);
  else window.history.pushState(null, '', href);
  for (const l of navListeners) l(currentPath());
}

/** Listens to navigation (links, back and forward). */
export function onNavigate(listener: (path: string) => void): () => void {
  navListeners.add(listener);
  const pop = () => listener(currentPath());
  window.addEventListener('popstate', pop);
  return () => {
    navListeners.delete(listener);
    window.removeEventListener('popstate', pop);
  };
}

/** The browser href of an app path. */
export const href = (path: string): string => toHref(path, basePath);
