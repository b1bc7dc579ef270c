import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'vite';

// What the console's CSP and security rules demand of the code and of the build: no inline script
// or style, no HTML from strings, no token storage, no address from the URL, nothing from a CDN.

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
let out = '';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'swb-console-build-'));
  await build({ root: pkg, configFile: join(pkg, 'vite.config.ts'), logLevel: 'silent', build: { outDir: out, emptyOutDir: true } });
});

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('console source', () => {
  const sources = filesUnder(join(pkg, 'src')).filter((f) => f.endsWith('.ts'));

  it('never builds HTML from strings, stores tokens, or reads an address from the URL', () => {
    expect(sources.length).toBeGreaterThan(10);
    const forbidden = [
      /innerHTML|outerHTML|insertAdjacentHTML|dangerouslySetInnerHTML|document\.write|\beval\(|new Function\(/,
      /localStorage|sessionStorage|indexedDB|document\.cookie/,
      /location\.(search|hash)|new URLSearchParams\(\s*(window\.)?location/,
      /\sstyle=/,
    ];
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const re of forbidden) expect(re.test(text), `${file} matches ${re}`).toBe(false);
    }
  });
});

describe('console build', () => {
  it('index.html has no inline script or style, no <base>, and loads its assets from /assets/', () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/assets\/[^"]+\.js"/);
      expect(body?.trim()).toBe('');
    }
    expect(html).not.toMatch(/<style\b|\sstyle=|<base\b|\son[a-z]+=/i);
    expect(html).toMatch(/<link rel="stylesheet"[^>]*href="\/assets\/[^"]+\.css"/);
  });

  it('references nothing outside the gateway (no CDN, no web font)', () => {
    for (const file of filesUnder(out)) {
      const text = readFileSync(file, 'utf8');
      const urls = [...text.matchAll(/https?:\/\/[^\s"'`)<>]+/g)].map((m) => m[0]).filter((u) => !u.startsWith('http://www.w3.org/'));
      expect(urls, file).toEqual([]);
      expect(text, file).not.toMatch(/@import\s+url|fonts\.googleapis|cdn\./);
    }
  });
});
