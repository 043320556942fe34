import { defineConfig } from 'vite';

// Five pages: the instance console (index.html), the cluster domain's sign-up page (signup.html),
// the page for an address where no instance lives (unknown.html), the operator's console
// (operator.html, served by the gateway's admin listener only) and dex's administrators' console
// (dex.html, served by dex).
// Preact's JSX through the automatic runtime; no plugin needed. Nothing is inlined, so the gateway's
// Content-Security-Policy can refuse every inline script and style.
const root = import.meta.dirname;

export default defineConfig({
  root,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    rollupOptions: {
      input: {
        index: `${root}/index.html`,
        signup: `${root}/signup.html`,
        unknown: `${root}/unknown.html`,
        operator: `${root}/operator.html`,
        dex: `${root}/dex.html`,
      },
    },
  },
});
