import { connect, type Socket } from 'node:net';

/** A raw TCP connection that did (or was refused) a WebSocket upgrade. */
export interface RawUpgrade {
  socket: Socket;
  /** The HTTP status of the handshake answer (101 when upgraded). */
  status: number;
  /** The answer's head and anything after it received so far. */
  head: string;
}

/**
 * Opens a TCP connection from `localAddress` and sends a WebSocket upgrade for `path`; resolves
 * with the handshake status. Lets a test write frames byte by byte, which `ws` cannot.
 */
export function rawUpgrade(port: number, localAddress: string, path = '/ws', headers: Record<string, string> = {}): Promise<RawUpgrade> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    let buf = '';
    socket.once('error', reject);
    socket.on('connect', () => {
      const extra = Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
      );
    });
    const onData = (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.off('error', reject);
      socket.on('error', () => undefined);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buf)?.[1] ?? 0);
      resolve({ socket, status, head: buf });
    };
    socket.on('data', onData);
  });
}

/**
 * A masked client frame header (mask key 0, so the payload goes unchanged and one buffer can be
 * shared by many sockets). `fin: false` starts a fragmented message.
 */
export function frameHeader(opcode: number, length: number, fin = true): Buffer {
  const first = (fin ? 0x80 : 0) | opcode;
  if (length < 126) return Buffer.from([first, 0x80 | length, 0, 0, 0, 0]);
  if (length < 65536) {
    const b = Buffer.alloc(8);
    b[0] = first;
    b[1] = 0x80 | 126;
    b.writeUInt16BE(length, 2);
    return b;
  }
  const b = Buffer.alloc(14);
  b[0] = first;
  b[1] = 0x80 | 127;
  b.writeBigUInt64BE(BigInt(length), 2);
  return b;
}

/** A ping with no payload: the server answers pong once it has parsed everything sent before. */
export const PING = frameHeader(0x9, 0);

/**
 * Resolves `'pong'` when the server's first frame after the handshake is a pong, or `'closed'`
 * when it sends a close frame or ends the connection.
 */
export function serverVerdict(socket: Socket): Promise<'pong' | 'closed'> {
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      if (chunk[0] === 0x8a) resolve('pong');
      else if (chunk[0] === 0x88) resolve('closed');
    });
    socket.once('close', () => resolve('closed'));
  });
}

/** The resident set size of a process, in bytes (Linux /proc). */
export async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no VmRSS for pid ${pid}`);
  return kb * 1024;
}
