import { defineConfig } from 'vite';

// Asset URLs in index.html are absolute (`/assets/…`) so deep links (`/sessions/abc`) load them;
// under another `console.basePath` the gateway rewrites `="/assets/` to `="<basePath>assets/` when
// it serves index.html (no <base> element: the CSP has `base-uri 'none'`).
export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Nothing inlined as data: URIs or inline scripts: the console's CSP is `script-src 'self'; style-src 'self'`.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
