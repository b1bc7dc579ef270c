import { describe, it } from 'vitest';
import { assertNoTimersLeft, CONTRACT_POINTS, type ContractPoint, stopIdempotent, type TimerWatch, watchTimers, within } from './checks.js';
import type { ContractHarness, ContractRig } from './harness.js';

/**
 * Builds and starts a fresh rig, runs `fn` on it, then stops the channel (bounded by
 * `stopBudgetMs`) and tears the rig down; `afterClose` then sees the timers set since `start`.
 */
export async function withContractRig<T>(
  harness: ContractHarness,
  fn: (rig: ContractRig) => Promise<T>,
  afterClose?: (timers: TimerWatch) => Promise<void>,
): Promise<T> {
  const rig = await harness.setup();
  const timers = watchTimers();
  try {
    await rig.start();
    const result = await fn(rig);
    await teardown(harness, rig);
    await afterClose?.(timers);
    return result;
  } catch (err) {
    await teardown(harness, rig);
    throw err;
  } finally {
    timers.dispose();
  }
}

const tornDown = new WeakSet<ContractRig>();

async function teardown(harness: ContractHarness, rig: ContractRig): Promise<void> {
  if (tornDown.has(rig)) return;
  tornDown.add(rig);
  // Bounded: a channel whose stop hangs fails its contract point, not the teardown.
  await within(
    Promise.resolve().then(() => rig.channel.stop('shutdown')),
    harness.stopBudgetMs ?? 5000,
    'stop() at teardown',
  ).catch(() => undefined);
  await rig.close();
}

/** Runs one contract point against a fresh rig of `harness`; rejects when the channel breaks it. */
export function checkContractPoint(harness: ContractHarness, point: ContractPoint): Promise<void> {
  if (point === 'stop is idempotent and prompt')
    return withContractRig(
      harness,
      (rig) => stopIdempotent(rig, harness.stopBudgetMs),
      (timers) => assertNoTimersLeft(timers, harness.knownLibraryTimers),
    );
  return withContractRig(harness, (rig) => CONTRACT_POINTS[point](rig));
}

/**
 * Registers the channel contract as vitest tests: one `it` per point, each on a fresh rig (see
 * {@link ContractHarness}). `notApplicable` names points that cannot arise for this harness's
 * transport, each with the reason and the harness that covers the point instead: they are not
 * registered at all (nothing is skipped), and a reason must be given.
 */
export function runChannelContract(harness: ContractHarness, opts: { notApplicable?: Partial<Record<ContractPoint, string>> } = {}): void {
  describe(`channel contract: ${harness.name}`, () => {
    for (const point of Object.keys(CONTRACT_POINTS) as ContractPoint[]) {
      if (opts.notApplicable?.[point]?.trim()) continue;
      it(point, () => checkContractPoint(harness, point));
    }
  });
}
