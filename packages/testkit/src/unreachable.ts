import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A loopback port that was free a moment ago and now refuses connections (ECONNREFUSED). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A loopback server that accepts every connection and never answers a byte. */
export interface Blackhole {
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Destroys every held connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a {@link Blackhole} on 127.0.0.1 at a free port. */
export async function startBlackhole(): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
