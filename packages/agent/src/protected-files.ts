/**
 * Files a shell, git or direnv runs or obeys on their own (base names). One list for the two
 * guards: the file tools refuse to write them (core's permission safety check) and the exec
 * sandbox mounts them read-only at the workspace root.
 */
export const SHELL_RC_FILES: readonly string[] = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.kshrc',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.inputrc',
  '.envrc',
  '.gitconfig',
  '.gitmodules',
];
