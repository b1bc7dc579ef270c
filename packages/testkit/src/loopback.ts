import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `server` on 127.0.0.1 at a free port and returns the port (rejects on a listen error). */
export async function listenLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
