import { describe, expect, it } from 'vitest';
import { protectedWorkspacePathReason, SHELL_RC_FILES } from '../src/index.js';

describe('protectedWorkspacePathReason (the list core and the exec checks share)', () => {
  it.each([
    ['.git', '.git/'],
    ['.git/config', '.git/'],
    ['sub/.GIT/hooks/pre-commit', '.git/'],
    ['.ssh/authorized_keys', '.ssh/'],
    ['.switchboard/settings.json', '.switchboard/'],
    ['.config/git/config', '.config/git/'],
    ['a/.config/fish/config.fish', '.config/fish/'],
    ['.bashrc', '.bashrc is run'],
    ['deep/dir/.ZSHRC', '.zshrc is run'],
    ['/home/u/.profile', '.profile is run'],
    ['AGENTS.md', 'AGENTS.md becomes instructions'],
    ['docs/deep/agents.MD', 'AGENTS.md becomes instructions'],
  ])('%s is protected (%s)', (lexical, why) => {
    expect(protectedWorkspacePathReason(lexical)).toContain(why);
  });

  it('covers every rc file', () => {
    for (const file of SHELL_RC_FILES) expect(protectedWorkspacePathReason(`x/${file}`)).toBeDefined();
  });

  it.each([
    '',
    '.',
    'a.txt',
    'bashrc',
    '.gitignore',
    '.github/workflows/ci.yml',
    '.config/nvim/init.vim',
    'git/config',
    'ssh/key',
    '.bashrc.d/x',
    'AGENTS.md.bak',
    'agents/notes.md',
  ])('%j is not protected', (lexical) => {
    expect(protectedWorkspacePathReason(lexical)).toBeUndefined();
  });
});
