// The Node face of the console: where its built pages are, for the gateway and dex that serve them.
// In the workspace: apps/console/dist. In a bundle (apps/gateway/dist/main.js or apps/dex/dist/main.js
// compiles this file in, so __dirname is the bundle's folder): the copy scripts/build.mjs puts beside it,
// in apps/<app>/dist/console.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { existsSync } = require('node:fs');

/**
 * Vite's output folder: index.html (the instance console), signup.html (the cluster's sign-up page),
 * unknown.html (for a browser at an address where no instance lives), operator.html and dex.html (the
 * operator's and dex administrators' consoles), assets/.
 */
exports.consoleDist = function consoleDist() {
  const workspace = `${__dirname}/dist`;
  const bundled = `${__dirname}/console`;
  return !existsSync(`${workspace}/index.html`) && existsSync(`${bundled}/index.html`) ? bundled : workspace;
};
