import type { Storage } from '@switchboard/core';
import { afterEach, beforeEach, describe } from 'vitest';
import { adminContract } from './contract/admin-contract.js';
import { budgetContract } from './contract/budget-contract.js';
import { cursorContract } from './contract/cursor-contract.js';
import { deliveryContract } from './contract/delivery-contract.js';
import { governanceContract } from './contract/governance-contract.js';
import { identityContract } from './contract/identity-contract.js';
import { memoryContract } from './contract/memory-contract.js';
import { offerSwitchContract } from './contract/offer-switch-contract.js';
import { pairingContract } from './contract/pairing-contract.js';
import { profileContract } from './contract/profile-contract.js';
import { sessionContract } from './contract/session-contract.js';
import { turnContract } from './contract/turn-contract.js';
import { usageContract } from './contract/usage-contract.js';

/**
 * The behaviour every {@link Storage} implementation must show. Each test gets a fresh, empty
 * storage from `makeStorage` and closes it afterwards.
 */
export function runStorageContract(name: string, makeStorage: () => Promise<Storage> | Storage): void {
  describe(`Storage contract: ${name}`, () => {
    let storage: Storage | undefined;
    const store = (): Storage => {
      if (!storage) throw new Error('storage not opened');
      return storage;
    };
    beforeEach(async () => {
      storage = await makeStorage();
    });
    afterEach(async () => {
      await storage?.close();
      storage = undefined;
    });

    describe('principals, identities and tokens', () => identityContract(store));
    describe('sessions and transcript', () => sessionContract(store));
    describe('inbox and turns', () => turnContract(store));
    describe('delivery ledger', () => deliveryContract(store));
    describe('approvals, rules and audit', () => governanceContract(store));
    describe('control-API changes (principals, identities, sessions)', () => adminContract(store));
    describe('pairing requests and held messages', () => pairingContract(store));
    describe('usage rows (one per model call)', () => usageContract(store));
    describe('budget overrides and spend', () => budgetContract(store));
    describe('offer-switches (tools offered at a scope)', () => offerSwitchContract(store));
    describe('memories (scoped, full-text search)', () => memoryContract(store));
    describe('profiles and approved instruction files', () => profileContract(store));
    describe('channel cursors', () => cursorContract(store));
  });
}
