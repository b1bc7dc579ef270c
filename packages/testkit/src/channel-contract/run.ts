import { describe, it } from 'vitest';
import { CONTRACT_POINTS, type ContractPoint, stopIdempotent } from './checks.js';
import type { ContractHarness, ContractRig } from './harness.js';

/** Builds and starts a fresh rig, runs `fn` on it, then stops the channel and tears the rig down. */
export async function withContractRig<T>(harness: ContractHarness, fn: (rig: ContractRig) => Promise<T>): Promise<T> {
  const rig = await harness.setup();
  try {
    await rig.start();
    return await fn(rig);
  } finally {
    await rig.channel.stop('shutdown').catch(() => undefined);
    await rig.close();
  }
}

/** Runs one contract point against a fresh rig of `harness`; rejects when the channel breaks it. */
export function checkContractPoint(harness: ContractHarness, point: ContractPoint): Promise<void> {
  if (point === 'stop is idempotent and prompt') return withContractRig(harness, (rig) => stopIdempotent(rig, harness.stopBudgetMs));
  return withContractRig(harness, (rig) => CONTRACT_POINTS[point](rig));
}

/**
 * Registers the channel contract as vitest tests: one `it` per point, each on a fresh rig (see
 * {@link ContractHarness}). `skip` names points the channel is excused from, with the reason
 * shown in the test name (there should be none).
 */
export function runChannelContract(harness: ContractHarness, opts: { skip?: Partial<Record<ContractPoint, string>> } = {}): void {
  describe(`channel contract: ${harness.name}`, () => {
    for (const point of Object.keys(CONTRACT_POINTS) as ContractPoint[]) {
      const reason = opts.skip?.[point];
      if (reason) it.skip(`${point} (skipped: ${reason})`, () => undefined);
      else it(point, () => checkContractPoint(harness, point));
    }
  });
}
