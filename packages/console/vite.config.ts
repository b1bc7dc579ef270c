import { defineConfig } from 'vite';

// `base: './'`: asset URLs are relative to the page's <base href>, which the gateway sets to
// `console.basePath` when it serves index.html, so one build works under any base path.
export default defineConfig({
  base: './',
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
