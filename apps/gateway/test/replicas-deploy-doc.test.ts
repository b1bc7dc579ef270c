import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../src/config.js';

// docs/operations.md ships a compose file for three replicas, their config and a Caddyfile: they
// are checked here without a Docker engine, so the page cannot drift from what the gateway accepts.
const root = fileURLToPath(new URL('../../..', import.meta.url));
const page = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
const section = page.slice(page.indexOf('## Replicas (several gateways on one PostgreSQL)'), page.indexOf('## One gateway per data dir'));

/** The fenced blocks of `lang` in the replicas section, in order. */
function blocks(lang: string): string[] {
  return [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] ?? '');
}

type Service = { volumes?: string[]; environment?: Record<string, string>; depends_on?: Record<string, unknown> | string[]; stop_grace_period?: string };

describe('docs/operations.md: three replicas on PostgreSQL', () => {
  const compose = parse(blocks('yaml')[0] ?? '', { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
  const env = {
    DATABASE_URL: 'postgres://switchboard:pw@postgres:5432/switchboard',
    ANTHROPIC_API_KEY: 'sk-ant-example-000000',
    TELEGRAM_BOT_TOKEN: '123456:example-token-000000000000',
  };
  const cfg = parseConfig(blocks('json5')[0] ?? '', env, '/app');
  const replicas = ['sb1', 'sb2', 'sb3'];

  it('the replicas config is a valid PostgreSQL config with a shared workspaces root', () => {
    expect(cfg.storage).toMatchObject({ kind: 'postgres', url: env.DATABASE_URL });
    expect(cfg.workspaces.root).toBe('/workspaces');
    expect(cfg.gateway.dataDir).toBe('/data');
    expect(cfg.channels.telegram?.accounts.main).toMatchObject({ mode: 'polling' });
    expect(cfg.replicas.leaseTtl).toBe(15_000);
  });

  it('each replica has a data volume of its own, all mount the same workspaces volume and reach PostgreSQL', () => {
    const dataVolumes = replicas.map((r) => compose.services[r]?.volumes?.find((v) => v.endsWith(':/data')));
    expect(new Set(dataVolumes).size).toBe(3);
    for (const r of replicas) {
      const svc = compose.services[r];
      expect(svc?.volumes).toContain(`workspaces:${cfg.workspaces.root}`);
      expect(svc?.environment?.DATABASE_URL).toMatch(/^postgres:\/\/switchboard:.*@postgres:5432\/switchboard$/);
      expect(svc?.environment?.SWITCHBOARD_DATA_DIR).toBe('/data');
      // The container is given longer to stop than the gateway's drain.
      expect(Number.parseInt(svc?.stop_grace_period ?? '0', 10) * 1000).toBeGreaterThan(cfg.limits.shutdownGrace);
    }
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['pgdata', 'sb1-data', 'sb2-data', 'sb3-data', 'workspaces']));
    expect(compose.services.postgres?.environment?.POSTGRES_DB).toBe('switchboard');
  });

  it('the proxy balances over the three replicas and checks /readyz', () => {
    const caddy = blocks('caddyfile')[0] ?? '';
    expect(caddy).toMatch(/reverse_proxy sb1:7420 sb2:7420 sb3:7420/);
    expect(caddy).toMatch(/health_uri \/readyz/);
    expect(compose.services.proxy?.depends_on).toEqual(replicas);
  });
});
