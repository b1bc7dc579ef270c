import { describe, expect, it } from 'vitest';
import { checkSafety, protectedPathReason } from '../../src/index.js';

const ws = '/srv/ws';
const opts = { configFile: '/etc/switchboard/config.json5', databaseFile: '/srv/ws/data/switchboard.db' };
const writer = { name: 'write_file', readOnly: false };

describe('safety checks', () => {
  it.each([
    '.git/config',
    '.git/hooks/pre-commit',
    'vendor/lib/.git/config',
    '.GIT/config',
    '.switchboard/state.json',
    '.bashrc',
    'home/.zshrc',
    '.profile',
    '.bash_profile',
    '.zprofile',
    '.config/fish/config.fish',
    '.config/fish/conf.d/x.fish',
    '.gitconfig',
    '.envrc',
    '.ssh/authorized_keys',
    '/srv/ws/.git/config',
    'notes/../.git/config',
    'data/switchboard.db',
    'data/switchboard.db-wal',
    '/etc/switchboard/config.json5',
    '/home/me/.bashrc',
  ])('asks before writing %s', (p) => {
    expect(protectedPathReason(p, ws, opts)).toBeDefined();
    expect(checkSafety(writer, p, ws, opts)?.behavior).toBe('ask');
  });

  it.each(['notes/a.md', '.gitignore', 'git/config', 'my.bashrc.txt', '.config/other/x', 'data/other.db', 'src/.github/workflows/ci.yml'])(
    'leaves %s alone',
    (p) => {
      expect(checkSafety(writer, p, ws, opts)).toBeUndefined();
    },
  );

  it('ignores read-only tools and tools without a path', () => {
    expect(checkSafety({ name: 'read_file', readOnly: true }, '.git/config', ws, opts)).toBeUndefined();
    expect(checkSafety(writer, undefined, ws, opts)).toBeUndefined();
  });

  it('protects extra paths and explains itself', () => {
    const hit = checkSafety(writer, 'keys/a.pem', ws, { extraPaths: ['/srv/ws/keys'] });
    expect(hit?.reason).toMatch(/write_file on keys\/a\.pem always needs a person's approval.*operator protected it/);
    expect(checkSafety(writer, '.git/config', ws)?.reason).toMatch(/\.git\/ holds git metadata/);
  });
});
