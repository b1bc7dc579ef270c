import type { Role, Storage } from '../storage.js';

/**
 * Creates principals for the boundary: a fresh one by name (de-duplicated with `-2`, `-3`, …),
 * and — once per identity even under concurrent messages — the principal of an allowlisted
 * identity, linked and audited.
 */
export class PrincipalLinker {
  private readonly linking = new Map<string, Promise<string>>();

  constructor(private readonly storage: Storage) {}

  /** The principal linked to `<channelType>:<externalId>`, created (as `role`) and linked when there is none. */
  autoLink(channelType: string, externalId: string, displayName: string | undefined, role: Role): Promise<string> {
    const key = `${channelType}:${externalId}`;
    const running = this.linking.get(key);
    if (running) return running;
    const linked = this.createAndLink(channelType, externalId, displayName ?? key, role).finally(() => this.linking.delete(key));
    this.linking.set(key, linked);
    return linked;
  }

  /** A new principal named after `name` (unsafe characters replaced, at most 48), with a suffix when taken. */
  async createPrincipal(name: string, role: Role): Promise<string> {
    const base = name.replace(/[^A-Za-z0-9._@-]/g, '-').slice(0, 48) || 'person';
    for (let attempt = 0; ; attempt++) {
      const candidate = attempt === 0 ? base : `${base}-${attempt + 1}`;
      if (!(await this.storage.principals.byName(candidate))) return (await this.storage.principals.create({ name: candidate, role })).id;
    }
  }

  private async createAndLink(channelType: string, externalId: string, name: string, role: Role): Promise<string> {
    const existing = await this.storage.principals.byIdentity(channelType, externalId);
    if (existing) return existing.id;
    const principal = await this.createPrincipal(name, role);
    await this.storage.principals.linkIdentity(principal, channelType, externalId);
    await this.storage.audit.append({
      actor: 'gateway',
      action: 'principal.created',
      target: principal,
      detail: { identity: `${channelType}:${externalId}`, role, via: 'allowFrom' },
    });
    return principal;
  }
}
