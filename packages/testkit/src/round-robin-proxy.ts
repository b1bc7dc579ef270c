import { connect, createServer, type Server, type Socket } from 'node:net';

/** A backend the proxy may send a connection to; `null` while it is down (skipped). */
export type ProxyBackend = { host: string; port: number } | null;

/** A loopback TCP proxy that hands each new connection to the next live backend in turn. */
export interface RoundRobinProxy {
  readonly port: number;
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `ws://127.0.0.1:PORT/ws`. */
  readonly wsUrl: string;
  /** Sets backend `index` (a restarted replica listens on a new port); `null` takes it out of the rotation. */
  setBackend(index: number, backend: ProxyBackend): void;
  /** How many connections each backend was given so far, by index. */
  routed(): number[];
  /** Closes the listener and every proxied connection. */
  close(): Promise<void>;
}

/**
 * Starts a round-robin TCP proxy on 127.0.0.1 (a free port) in front of `backends`. Each accepted
 * connection (an HTTP keep-alive connection, a WebSocket) is piped to one backend for its whole
 * life, the next one in turn; a backend that refuses the connection is skipped for that
 * connection (like a load balancer's failed health check), and when none accepts, the client's
 * connection is closed. Closing either side closes the other.
 */
export async function startRoundRobinProxy(backends: readonly ProxyBackend[]): Promise<RoundRobinProxy> {
  const table: ProxyBackend[] = [...backends];
  const counts: number[] = backends.map(() => 0);
  const open = new Set<Socket>();
  let next = 0;

  const tryConnect = (b: { host: string; port: number }): Promise<Socket | null> =>
    new Promise((resolve) => {
      const upstream = connect({ host: b.host, port: b.port });
      const fail = () => {
        upstream.destroy();
        resolve(null);
      };
      upstream.once('error', fail);
      upstream.once('connect', () => {
        upstream.off('error', fail);
        resolve(upstream);
      });
    });

  const pick = async (): Promise<{ socket: Socket; index: number } | null> => {
    for (let tried = 0; tried < table.length; tried++) {
      const index = next % table.length;
      next = (next + 1) % Math.max(1, table.length);
      const b = table[index];
      if (!b) continue;
      const socket = await tryConnect(b);
      if (socket) return { socket, index };
    }
    return null;
  };

  const server: Server = createServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    void pick().then((picked) => {
      if (!picked || client.destroyed) {
        picked?.socket.destroy();
        client.destroy();
        return;
      }
      const { socket, index } = picked;
      counts[index] = (counts[index] ?? 0) + 1;
      open.add(socket);
      socket.once('close', () => {
        open.delete(socket);
        client.destroy();
      });
      socket.on('error', () => socket.destroy());
      client.once('close', () => socket.destroy());
      client.pipe(socket);
      socket.pipe(client);
      client.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    setBackend(index, backend) {
      if (!Number.isInteger(index) || index < 0) throw new Error(`proxy backend index must be a non-negative integer, got ${index}`);
      table[index] = backend;
      while (counts.length < table.length) counts.push(0);
    },
    routed: () => [...counts],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
