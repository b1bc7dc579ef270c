import type { Identity, PersonalData, Principal, Role, Storage } from '@switchboard/core';

/** The outcome of a principal change: the result, or an HTTP-style refusal. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: 404 | 409; code: string; message: string };

const refuse = (status: 404 | 409, code: string, message: string) => ({ ok: false, status, code, message }) as const;

/** The JSON shape of an identity. */
export const identityView = (i: Identity) => ({
  id: i.id,
  channelType: i.channelType,
  externalId: i.externalId,
  identity: `${i.channelType}:${i.externalId}`,
  createdAt: i.createdAt.toISOString(),
});

/** The JSON shape of a principal with its identities. */
export async function principalView(storage: Storage, p: Principal) {
  return {
    id: p.id,
    name: p.name,
    role: p.role,
    createdAt: p.createdAt.toISOString(),
    identities: (await storage.principals.identities(p.id)).map(identityView),
  };
}

async function isLastOwner(storage: Storage, p: Principal): Promise<boolean> {
  if (p.role !== 'owner') return false;
  return (await storage.principals.list()).filter((x) => x.role === 'owner').length <= 1;
}

/**
 * Principal changes shared by the control API and the CLI. Each one is audited with `actor`
 * (`operator:<token name>` or `cli:<user>`). The last owner can be neither demoted nor deleted.
 */
export const principalService = {
  /** Creates a principal; 409 `name_taken` when the name is in use. */
  async create(storage: Storage, input: { name: string; role: Role }, actor: string): Promise<Outcome<Principal>> {
    if (await storage.principals.byName(input.name)) return refuse(409, 'name_taken', `A principal named ${input.name} already exists.`);
    let p: Principal;
    try {
      p = await storage.principals.create(input);
    } catch {
      return refuse(409, 'name_taken', `A principal named ${input.name} already exists.`);
    }
    await storage.audit.append({ actor, action: 'principal.create', target: p.id, detail: { name: p.name, role: p.role } });
    return { ok: true, value: p };
  },

  /** Renames and/or changes a role. */
  async update(storage: Storage, id: string, patch: { name?: string | undefined; role?: Role | undefined }, actor: string): Promise<Outcome<Principal>> {
    const before = await storage.principals.get(id);
    if (!before) return refuse(404, 'not_found', `No principal ${id}.`);
    if (patch.name !== undefined && patch.name !== before.name && (await storage.principals.byName(patch.name))) {
      return refuse(409, 'name_taken', `A principal named ${patch.name} already exists.`);
    }
    if (patch.role !== undefined && patch.role !== 'owner' && (await isLastOwner(storage, before))) {
      return refuse(409, 'last_owner', `${before.name} is the last owner; make someone else owner first.`);
    }
    let after: Principal | null;
    try {
      after = await storage.principals.update(id, {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.role !== undefined ? { role: patch.role } : {}),
      });
    } catch {
      return refuse(409, 'name_taken', `A principal named ${patch.name} already exists.`);
    }
    if (!after) return refuse(404, 'not_found', `No principal ${id}.`);
    await storage.audit.append({
      actor,
      action: 'principal.update',
      target: id,
      detail: { before: { name: before.name, role: before.role }, after: { name: after.name, role: after.role } },
    });
    return { ok: true, value: after };
  },

  /**
   * Deletes a principal (identities unlinked, tokens revoked); sessions and transcripts stay. Their
   * personal data (`personal`: memories, workspace, …) is erased first, so a failed erase leaves
   * the principal in place to retry; the audit entry lists what each part erased.
   */
  async remove(
    storage: Storage,
    id: string,
    actor: string,
    personal?: PersonalData,
  ): Promise<Outcome<{ identities: number; tokens: number; erased: Record<string, unknown> }>> {
    const p = await storage.principals.get(id);
    if (!p) return refuse(404, 'not_found', `No principal ${id}.`);
    if (await isLastOwner(storage, p)) return refuse(409, 'last_owner', `${p.name} is the last owner; make someone else owner first.`);
    const erased = personal ? await personal.erase(id) : {};
    const res = await storage.principals.remove(id);
    if (!res) return refuse(404, 'not_found', `No principal ${id}.`);
    await storage.audit.append({ actor, action: 'principal.delete', target: id, detail: { name: p.name, role: p.role, ...res, erased } });
    return { ok: true, value: { ...res, erased } };
  },

  /** Links an identity; 409 `identity_taken` when another principal has it. `created` is false when it was already linked here. */
  async link(storage: Storage, id: string, channelType: string, externalId: string, actor: string): Promise<Outcome<{ identity: Identity; created: boolean }>> {
    if (!(await storage.principals.get(id))) return refuse(404, 'not_found', `No principal ${id}.`);
    const owner = await storage.principals.byIdentity(channelType, externalId);
    if (owner && owner.id !== id) return refuse(409, 'identity_taken', `${channelType}:${externalId} is already linked to another principal.`);
    const before = (await storage.principals.identities(id)).find((i) => i.channelType === channelType && i.externalId === externalId);
    if (before) return { ok: true, value: { identity: before, created: false } };
    let identity: Identity;
    try {
      identity = await storage.principals.linkIdentity(id, channelType, externalId);
    } catch {
      return refuse(409, 'identity_taken', `${channelType}:${externalId} is already linked to another principal.`);
    }
    await storage.audit.append({ actor, action: 'identity.link', target: id, detail: { identity: `${channelType}:${externalId}` } });
    return { ok: true, value: { identity, created: true } };
  },

  /** Unlinks an identity of this principal. */
  async unlink(storage: Storage, id: string, channelType: string, externalId: string, actor: string): Promise<Outcome<true>> {
    if (!(await storage.principals.get(id))) return refuse(404, 'not_found', `No principal ${id}.`);
    if (!(await storage.principals.unlinkIdentity(id, channelType, externalId))) {
      return refuse(404, 'not_found', `${channelType}:${externalId} is not linked to principal ${id}.`);
    }
    await storage.audit.append({ actor, action: 'identity.unlink', target: id, detail: { identity: `${channelType}:${externalId}` } });
    return { ok: true, value: true };
  },
};
