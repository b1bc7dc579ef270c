import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { currentPath, hub, onNavigate } from './context';
import type { EventType } from './events';
import { matchRoute, type Route } from './router';

/** The current route; re-renders on navigation. */
export function useRoute(): Route {
  const [path, setPath] = useState(currentPath());
  useEffect(() => onNavigate(setPath), []);
  return matchRoute(path);
}

/** State of a load: the data, the error, whether it runs, and a reload. */
export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on `reload`); keeps the last data while reloading. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loadRef.current().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Calls `handler` on each live event of the given types. */
export function useEvents(types: EventType[], handler: (type: EventType, data: Record<string, unknown>) => void): void {
  const ref = useRef(handler);
  ref.current = handler;
  const key = types.join(',');
  useEffect(() => {
    const offs = types.map((t) => hub.on(t, (data) => ref.current(t, data)));
    return () => {
      for (const off of offs) off();
    };
  }, [key]);
}

/** A one-shot action's state: running, its error, and a runner that reports both. */
export function useAction(): { busy: boolean; error: unknown; run: (fn: () => Promise<unknown>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}
