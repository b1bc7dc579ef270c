import { SHELL_RC_FILES } from './protected-files.js';

/**
 * The workspace part of the protected-path list, shared by core's permission safety check (file
 * tools) and the exec checks (argument and redirection writes): folders whose contents run code or
 * hold the gateway's state, rc files, and shell/git configuration folders, at any depth.
 */

/** Folders (any depth, any case) whose contents run code or hold the gateway's state, with why. */
export const PROTECTED_PATH_DIRS: ReadonlyArray<readonly [dir: string, label: string]> = [
  ['.git', 'git metadata (hooks and config run code)'],
  ['.switchboard', "the gateway's own state"],
  ['.ssh', 'SSH keys and configuration'],
];

/** Folder sequences (as path segments, any depth) whose contents are shell or git configuration. */
export const PROTECTED_PATH_SUBPATHS: ReadonlyArray<readonly string[]> = [
  ['.config', 'fish'],
  ['.config', 'git'],
];

const RC_FILES: ReadonlySet<string> = new Set(SHELL_RC_FILES);

/** Instruction files the gateway reads into the model's context (any depth; docs/instructions.md). */
export const INSTRUCTION_FILE_NAMES: readonly string[] = ['agents.md'];

/**
 * Why a write to `lexical` is sensitive, or `undefined` when it is not. `lexical` is a `/`-separated
 * path — workspace-relative when the write lands inside the workspace, else absolute — with `..`
 * already folded; the check is case-insensitive. Protected: any `.git/`, `.switchboard/` or `.ssh/`
 * folder (the folder itself included); the shell rc and profile files, `.envrc`, `.gitconfig`,
 * `.gitmodules` ({@link SHELL_RC_FILES}); `.config/fish/` and `.config/git/`; any `AGENTS.md`
 * ({@link INSTRUCTION_FILE_NAMES}).
 */
export function protectedWorkspacePathReason(lexical: string): string | undefined {
  const segments = lexical
    .toLowerCase()
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  for (const [dir, label] of PROTECTED_PATH_DIRS) {
    if (segments.includes(dir)) return `${dir}/ holds ${label}`;
  }
  const base = segments[segments.length - 1];
  if (base !== undefined && RC_FILES.has(base)) return `${base} is run or read by the shell or git on its own`;
  if (base !== undefined && INSTRUCTION_FILE_NAMES.includes(base)) return 'AGENTS.md becomes instructions to the assistant';
  for (const sub of PROTECTED_PATH_SUBPATHS) {
    for (let i = 0; i + sub.length <= segments.length; i++) {
      if (sub.every((s, j) => segments[i + j] === s)) return `${sub.join('/')}/ holds shell or git configuration`;
    }
  }
  return undefined;
}
