import type { WsClient, WsFrame } from '@switchboard/testkit';

/** The frame that ends a turn: a `final`, or an `error` carrying a cursor. */
export const isEnd = (f: WsFrame) => f.type === 'final' || (f.type === 'error' && typeof f.cursor === 'number');

/** Sends one message and collects its frames until the turn ends. */
export async function chat(
  ws: WsClient,
  clientId: string,
  text: string,
  timeoutMs = 20_000,
): Promise<{ accepted: WsFrame; deltas: string[]; end: WsFrame; frames: WsFrame[] }> {
  ws.send({ type: 'message', clientId, text });
  return collectTurn(ws, clientId, timeoutMs);
}

/** Collects the frames of the turn for `clientId` until its final or error. */
export async function collectTurn(ws: WsClient, clientId: string, timeoutMs = 20_000) {
  const frames: WsFrame[] = [];
  let accepted: WsFrame | undefined;
  for (;;) {
    const f = await ws.next((x) => x.clientId === clientId, timeoutMs);
    frames.push(f);
    if (f.type === 'accepted') accepted = f;
    if (isEnd(f)) {
      return { accepted: accepted!, deltas: frames.filter((x) => x.type === 'delta').map((x) => x.text as string), end: f, frames };
    }
  }
}

/** Bearer header for a token. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
