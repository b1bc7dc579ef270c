import type { WebClient } from '@slack/web-api';

const TTL_MS = 60 * 60_000;
const MAX_ENTRIES = 5000;

/**
 * Display names of Slack users (`users.info`), cached for an hour. Best effort and quick: the
 * client given has a short timeout and no retries, and a failure just means no name.
 */
export class UserNames {
  private readonly cache = new Map<string, { name: string | undefined; at: number }>();

  constructor(private readonly client: WebClient) {}

  async get(user: string): Promise<string | undefined> {
    const hit = this.cache.get(user);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.name;
    let name: string | undefined;
    try {
      const r = await this.client.users.info({ user });
      const u = r.user;
      name = u?.profile?.display_name || u?.real_name || u?.name || undefined;
    } catch {
      name = undefined;
    }
    this.cache.set(user, { name, at: Date.now() });
    if (this.cache.size > MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    return name;
  }
}
