import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '@switchboard/testkit';

// Acceptance 8: the deployment files, checked without a Docker engine. The compose file is
// parsed as YAML; the Dockerfile is read instruction by instruction, and its HEALTHCHECK command
// is run for real against a stand-in /healthz.

const root = repoRoot();
const read = (f: string) => readFileSync(join(root, f), 'utf8');
const DOCUMENTED = ['ANTHROPIC_API_KEY', 'TELEGRAM_BOT_TOKEN', 'SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'SWITCHBOARD_PORT'];

/** Dockerfile instructions with line continuations joined, comments dropped. */
function instructions(text: string): Array<{ op: string; args: string }> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(' ') };
    });
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml')) as { services: Record<string, any>; volumes?: Record<string, unknown> };
  const svc = compose.services.switchboard;

  it('runs the gateway with its data volume, the port and the documented variables', () => {
    expect(svc).toBeDefined();
    expect(svc.build).toBeDefined();
    const env = svc.environment as Record<string, string>;
    for (const name of DOCUMENTED) expect(Object.keys(env), name).toContain(name);
    expect(env.SWITCHBOARD_HOST).toBe('0.0.0.0');
    expect(env.SWITCHBOARD_DATA_DIR).toBe('/data');
    expect((svc.ports as string[]).some((p) => p.includes('7420') && p.includes('SWITCHBOARD_PORT'))).toBe(true);
    const dataVolume = (svc.volumes as string[]).find((v) => v.endsWith(':/data'));
    expect(dataVolume).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(dataVolume!.split(':')[0]);
    // Secrets come from the environment, never written into the file.
    for (const name of DOCUMENTED.filter((n) => n !== 'SWITCHBOARD_PORT')) expect(env[name]).toMatch(new RegExp(`^\\$\\{${name}(:-)?\\}$`));
  });

  it('every variable it passes is documented in docs/operations.md', () => {
    const ops = read('docs/operations.md');
    for (const name of Object.keys(svc.environment as object)) expect(ops, name).toContain(name);
    expect(ops).toContain('78');
    expect(ops).toMatch(/systemd/i);
    expect(ops).toMatch(/backup/i);
  });
});

describe('Dockerfile', () => {
  const ins = instructions(read('Dockerfile'));
  const all = (op: string) => ins.filter((i) => i.op === op).map((i) => i.args);

  it('builds in one stage and runs production dependencies in another', () => {
    expect(all('FROM').length).toBeGreaterThanOrEqual(3);
    const runs = all('RUN').join('\n');
    expect(runs).toContain('npm ci');
    expect(runs).toContain('tsc -b');
    expect(runs).toContain('--omit=dev');
  });

  it('runs as a non-root user with data in the /data volume and a healthcheck on /healthz', () => {
    const users = all('USER');
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users.at(-1));
    expect(all('VOLUME').join(' ')).toContain('/data');
    const health = all('HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]).toContain('/healthz');
    expect(all('EXPOSE').join(' ')).toContain('7420');
    const env = all('ENV').join(' ');
    expect(env).toContain('SWITCHBOARD_HOST=0.0.0.0');
    expect(env).toContain('SWITCHBOARD_DATA_DIR=/data');
  });

  it('copies the manifest of every workspace and the build output of every runtime package', () => {
    const copies = all('COPY').join('\n');
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
    for (const ws of workspaces) {
      expect(copies, ws).toContain(`${ws}/package.json`);
      if (ws !== 'packages/testkit') expect(copies, ws).toContain(`${ws}/dist`);
    }
    // Both engines' migrations: the image can start on SQLite or on PostgreSQL.
    expect(all('COPY')).toContain('migrations migrations');
    expect(all('COPY')).toContain('migrations-pg migrations-pg');
  });

  it('builds the console in the build stage and copies only its dist into the runtime image', () => {
    expect(all('RUN').join('\n')).toContain('npm run build -w @switchboard/console');
    const copies = all('COPY');
    expect(copies).toContain('packages/console/package.json packages/console/');
    expect(copies).toContain('--from=build /app/packages/console/dist packages/console/dist');
    expect(copies.filter((c) => c.includes('packages/console') && !c.includes('package.json'))).toEqual([
      '--from=build /app/packages/console/dist packages/console/dist',
    ]);
  });

  it('keeps dependencies, state and secrets out of the build context', () => {
    const ignore = read('.dockerignore');
    for (const entry of ['node_modules', 'dist', 'data', 'credentials', 'credentials.json', '.env']) expect(ignore).toContain(entry);
  });
});

describe('the HEALTHCHECK command', () => {
  let server: Server;
  let status = 200;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.statusCode = req.url === '/healthz' ? status : 404;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('exits 0 while /healthz answers 200 and 1 otherwise', async () => {
    const args = /CMD\s+(\[.*\])\s*$/.exec(instructions(read('Dockerfile')).find((i) => i.op === 'HEALTHCHECK')!.args)![1]!;
    const argv = JSON.parse(args) as string[];
    expect(argv[0]).toBe('node');
    const port = String((server.address() as AddressInfo).port);
    // Asynchronous on purpose: the stand-in server runs in this process.
    const run = () =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, argv.slice(1), { env: { ...process.env, SWITCHBOARD_PORT: port }, stdio: 'ignore', timeout: 10_000 });
        child.once('close', (code) => resolve(code));
      });
    expect(await run()).toBe(0);
    status = 503;
    expect(await run()).toBe(1);
  });
});
