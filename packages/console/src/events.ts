/**
 * The live stream `GET /api/v1/events` (server-sent events, filtered by the server for the
 * viewer). One EventSource for the whole app; pages subscribe to the event types they show.
 */
import { API_PREFIX } from './api';

/** The event types the console listens to. */
export const EVENT_TYPES = ['approval.requested', 'approval.decided', 'pairing.requested', 'pairing.decided', 'channel.health', 'turn.ended', 'stats'] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The connection's state, shown in the page header. */
export type StreamState = 'connecting' | 'live' | 'closed';

type Handler = (data: Record<string, unknown>) => void;

/** An event's data as an object, or null when it is not a JSON object. */
export function parseEventData(data: unknown): Record<string, unknown> | null {
  if (typeof data !== 'string') return null;
  try {
    const v: unknown = JSON.parse(data);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A hub that fans one event source out to subscribers. `open` takes the EventSource constructor (tests pass a fake). */
export function createEventHub() {
  const handlers = new Map<string, Set<Handler>>();
  const stateListeners = new Set<(s: StreamState) => void>();
  let source: EventSource | null = null;
  let state: StreamState = 'closed';

  const setState = (s: StreamState) => {
    state = s;
    for (const l of stateListeners) l(s);
  };

  const dispatch = (type: string, raw: unknown) => {
    const data = parseEventData(raw);
    if (data === null) return;
    for (const h of handlers.get(type) ?? []) h(data);
  };

  return {
    /** Opens the stream (once); the browser reconnects by itself after a drop. */
    open(Source: typeof EventSource = EventSource) {
      if (source) return;
      setState('connecting');
      const es = new Source(`${API_PREFIX}/events`, { withCredentials: false });
      source = es;
      es.onopen = () => setState('live');
      es.onerror = () => setState(es.readyState === 2 ? 'closed' : 'connecting');
      for (const type of EVENT_TYPES) es.addEventListener(type, (e) => dispatch(type, (e as MessageEvent).data));
    },
    close() {
      source?.close();
      source = null;
      setState('closed');
    },
    /** Subscribes to one event type; answers the unsubscribe function. */
    on(type: EventType, handler: Handler): () => void {
      let set = handlers.get(type);
      if (!set) handlers.set(type, (set = new Set()));
      set.add(handler);
      return () => set.delete(handler);
    },
    onState(listener: (s: StreamState) => void): () => void {
      stateListeners.add(listener);
      listener(state);
      return () => stateListeners.delete(listener);
    },
    /** For tests: deliver an event as the stream would. */
    dispatch,
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
