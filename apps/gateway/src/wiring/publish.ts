import { join } from 'node:path';
import type { Storage } from '@switchboard/core';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { bootstrapCredentials, writePrivateFile } from '../bootstrap.js';
import type { Config } from '../config.js';
import { adoptLegacyCredentials, logCredentialsCreated, logLegacyCredentials } from '../credentials-file.js';
import type { InstanceLock } from '../instance-lock.js';
import { listenError } from '../startup-errors.js';

/** Where the gateway listens: its base URL, the configured host and the bound port. */
export interface Endpoint {
  url: string;
  host: string;
  port: number;
}

/**
 * Start-up step: listens on `gateway.host`/`gateway.port` (a failure becomes a StartupError the
 * operator can act on) and records the bound port in the instance lock.
 */
export async function listen(app: FastifyInstance, gateway: Readonly<Config['gateway']>, instance: InstanceLock): Promise<Endpoint> {
  try {
    await app.listen({ host: gateway.host, port: gateway.port });
  } catch (err) {
    throw listenError(err, gateway.host, gateway.port);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : gateway.port;
  const urlHost = gateway.host.includes(':') ? `[${gateway.host}]` : gateway.host;
  instance.update({ host: gateway.host, port });
  return { url: `http://${urlHost}:${port}`, host: gateway.host, port };
}

/**
 * Start-up step, only once the listen succeeded (a start that fails leaves no credentials
 * behind): adopts an old credentials file, and on a first start creates the owner and writes
 * the new credentials file.
 */
export async function publishCredentials(log: Logger, storage: Storage, dataDir: string): Promise<void> {
  logLegacyCredentials(log, adoptLegacyCredentials(dataDir));
  const credentials = await bootstrapCredentials(storage, dataDir);
  if (credentials) logCredentialsCreated(log, credentials, dataDir);
}

/** Start-up step: writes `<dataDir>/endpoint` (url, host, port, pid) for the CLI; returns its path (removed on close). */
export function writeEndpointFile(dataDir: string, endpoint: Endpoint): string {
  const file = join(dataDir, 'endpoint');
  writePrivateFile(file, `${JSON.stringify({ url: endpoint.url, host: endpoint.host, port: endpoint.port, pid: process.pid })}\n`);
  return file;
}
