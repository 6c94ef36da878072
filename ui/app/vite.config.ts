// Builds the web UI into dist/ui-app, which the keeper serves at /ui (ui/server). JSX is compiled by
// vite's own esbuild for preact, so no framework plugin is needed.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/ui/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../../dist/ui-app', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // One small bundle: the app is a few views, and a single request keeps the CSP simple.
    modulePreload: { polyfill: false },
  },
});
