import type { Role, Storage } from '../storage.js';

/**
 * Creates principals for the boundary: a fresh one by name (de-duplicated with `-2`, `-3`, …),
 * and — once per identity even under concurrent messages, on this gateway or on replicas — the
 * principal of an allowlisted identity, linked and audited.
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
      if (await this.storage.principals.byName(candidate)) continue;
      try {
        return (await this.storage.principals.create({ name: candidate, role })).id;
      } catch (err) {
        // Taken meanwhile (another replica): the next suffix.
        if (!(await this.storage.principals.byName(candidate))) throw err;
      }
    }
  }

  private async createAndLink(channelType: string, externalId: string, name: string, role: Role): Promise<string> {
    const existing = await this.storage.principals.byIdentity(channelType, externalId);
    if (existing) return existing.id;
    let principal: string | undefined;
    try {
      principal = await this.createPrincipal(name, role);
      await this.storage.principals.linkIdentity(principal, channelType, externalId);
    } catch (err) {
      // Replicas: another gateway linked this identity (or took the name) at the same moment; its principal wins.
      const winner = await this.storage.principals.byIdentity(channelType, externalId);
      if (!winner) throw err;
      if (principal !== undefined && principal !== winner.id) await this.storage.principals.remove(principal);
      return winner.id;
    }
    await this.storage.audit.append({
      actor: 'gateway',
      action: 'principal.created',
      target: principal,
      detail: { identity: `${channelType}:${externalId}`, role, via: 'allowFrom' },
    });
    return principal;
  }
}
