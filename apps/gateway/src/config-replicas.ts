import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { duration } from '@switchboard/core';

/** A replica id: what leases, logs, `/readyz` and `GET /api/v1/replicas` name this process by. */
export const replicaIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'expected 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit');

/**
 * `replicas`: how replicas of one gateway share work when `storage.kind` is `postgres` (ignored on
 * SQLite, where a gateway is alone). A lease lapses `leaseTtl` after its holder's last renewal
 * (renewed at a third of it), so a replica that dies hands its receivers over within about `leaseTtl`.
 */
export const replicasSchema = z
  .strictObject({
    /** How long a receiver lease (Telegram polling, Slack Socket Mode) and the replica's presence outlive their last renewal. */
    leaseTtl: duration
      .pipe(z.number().min(2000, 'must be at least 2s (a shorter lease lapses by accident on a loaded machine)').max(600_000, 'must be at most 10min'))
      .default(15_000),
  })
  .prefault({});

/** The `replicas` section as parsed. */
export type ReplicasConfig = z.output<typeof replicasSchema>;

/**
 * This process's replica id: `gateway.replicaId` when set, else `<hostname>-<pid>-<random>` — new on
 * every start, so a restarted replica never mistakes the leases its previous process held for its own.
 */
export function resolveReplicaId(configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 64) || 'host';
  return `${host}-${process.pid}-${randomBytes(3).toString('hex')}`;
}
