import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '@switchboard/testkit';

const git = (cwd: string, args: string[], input?: string) => execFileSync('git', args, { cwd, encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });

/** The ```sh blocks of one `## ` section of a Markdown file, as lines (comments and blanks dropped). */
export function shellLines(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const next = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, next < 0 ? undefined : next);
  const lines: string[] = [];
  for (const m of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const raw of m[1]!.split('\n')) {
      // a trailing comment is two or more spaces then `#`
      const line = raw.replace(/\s{2,}#.*$/, '').trim();
      if (line && !line.startsWith('#')) lines.push(line);
    }
  }
  return lines;
}

/**
 * A fresh `git clone` of this checkout in a temp dir, with the working tree's uncommitted changes
 * (tracked diffs and untracked files) applied, and `node_modules` linked in from the checkout —
 * the workspace packages' links point into the clone, everything else at the checkout's copies.
 * No install runs. Returns the clone's path.
 */
export function cloneCheckout(): string {
  const root = repoRoot();
  const clone = join(mkdtempSync(join(tmpdir(), 'swb-clone-')), 'switchboard');
  const head = git(root, ['rev-parse', 'HEAD']).trim();
  git(tmpdir(), ['clone', '-q', '--no-checkout', root, clone]);
  git(clone, ['-c', 'advice.detachedHead=false', 'checkout', '-q', head]);
  const diff = git(root, ['diff', '--binary', 'HEAD']);
  if (diff) git(clone, ['apply', '--binary', '-'], diff);
  for (const file of git(root, ['ls-files', '--others', '--exclude-standard', '-z']).split('\0').filter(Boolean)) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(root, file), join(clone, file));
  }
  linkNodeModules(join(root, 'node_modules'), join(clone, 'node_modules'));
  return clone;
}

function linkNodeModules(from: string, to: string): void {
  mkdirSync(to);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name === '@switchboard') {
      // workspace links are relative (../../packages/x): the same link inside the clone points at the clone's packages
      mkdirSync(join(to, entry.name));
      for (const pkg of readdirSync(join(from, entry.name))) symlinkSync(readlinkSync(join(from, entry.name, pkg)), join(to, entry.name, pkg));
    } else {
      symlinkSync(join(from, entry.name), join(to, entry.name));
    }
  }
}

/**
 * What `npm install`'s `prepare` (`tsc -b`) would produce, without compiling everything again
 * (minutes on a loaded machine): the clone's sources are dated into the past and the checkout's
 * build output of the same sources (built by the suite's global setup) is copied in, so `tsc -b`
 * in the clone finds every project up to date — or rebuilds what is not.
 */
export function reuseBuild(clone: string): void {
  const root = repoRoot();
  const past = new Date('2001-01-01T00:00:00Z');
  for (const file of git(clone, ['ls-files', '-z']).split('\0').filter(Boolean)) utimesSync(join(clone, file), past, past);
  const workspaces = (JSON.parse(git(clone, ['show', 'HEAD:package.json'])) as { workspaces: string[] }).workspaces;
  for (const ws of workspaces) {
    for (const out of ['dist', 'tsconfig.tsbuildinfo']) {
      if (existsSync(join(root, ws, out))) cpSync(join(root, ws, out), join(clone, ws, out), { recursive: true, preserveTimestamps: true });
    }
  }
  execFileSync(process.execPath, [join(clone, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: clone, stdio: 'pipe' });
}
