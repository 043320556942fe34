// `pnpm build` (after generate and the type check): bundles each app's entry points with esbuild into
// apps/<app>/dist/*.js with source maps. A bundle carries the workspace packages and their npm
// dependencies, so a process runs with `node dist/main.js` and nothing else: no tsx, TypeScript or
// node_modules resolution across the workspace at run time. Plain .mjs so it runs without tsx.
// `--out DIR` writes DIR/apps/<app>/dist instead (the scale-out test builds into a temporary copy).
import { build } from 'esbuild';
import { cpSync, existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outIndex = process.argv.indexOf('--out');
const outRoot = outIndex > 0 ? path.resolve(process.argv[outIndex + 1]) : root;

/**
 * npm packages that cannot be bundled (a native addon found at run time), per app: copied with their
 * dependencies into dist/node_modules, where node finds them from the bundle.
 */
const natives = { gateway: ['sharp'], dex: [] };

/** Copies `name` as installed for `fromDir`, and what it needs at run time, into `nodeModules` (once each). */
function copyPackage(name, fromDir, nodeModules, optional = false) {
  const target = path.join(nodeModules, name);
  if (existsSync(target)) return;
  // Where node would look from `fromDir` (a package's exports may hide its package.json from resolve()).
  const found = createRequire(path.join(fromDir, 'noop.js'))
    .resolve.paths(name)
    .map((folder) => path.join(folder, name))
    .find((folder) => existsSync(path.join(folder, 'package.json')));
  // pnpm links a package; its own dependencies lie beside where the link points.
  const dir = found && realpathSync(found);
  if (!dir) {
    // Optional dependencies for other platforms are not installed.
    if (optional) return;
    throw new Error(`${name} is not installed for ${fromDir}`);
  }
  const manifest = path.join(dir, 'package.json');
  cpSync(dir, target, { recursive: true, dereference: true });
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  for (const dep of Object.keys(pkg.dependencies ?? {})) copyPackage(dep, dir, nodeModules);
  for (const dep of Object.keys(pkg.optionalDependencies ?? {})) copyPackage(dep, dir, nodeModules, true);
}

/** Output name → source, per app. */
const apps = {
  gateway: {
    main: 'src/main.ts',
    worker: 'src/worker-main.ts',
    migrate: 'src/migrate-main.ts',
    'rotate-key': 'src/rotate-key-main.ts',
    admin: 'src/admin-main.ts',
  },
  dex: {
    main: 'src/main.ts',
    worker: 'src/worker-main.ts',
    migrate: 'src/migrate-main.ts',
    cli: 'src/cli.ts',
    'rotate-key': 'src/rotate-key-main.ts',
  },
};

for (const [app, entries] of Object.entries(apps)) {
  const dir = path.join(root, 'apps', app);
  const outdir = path.join(outRoot, 'apps', app, 'dist');
  rmSync(outdir, { recursive: true, force: true });
  const started = Date.now();
  const result = await build({
    absWorkingDir: dir,
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, source]) => [name, path.join(dir, source)])),
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node20.19',
    format: 'cjs',
    sourcemap: true,
    // Stack traces point at the TypeScript sources without a --enable-source-maps flag.
    banner: { js: 'process.setSourceMapsEnabled(true);' },
    // The workspace packages from their TypeScript sources, as in development: no package dist is needed.
    conditions: ['@pds/source', 'module'],
    // pg's optional native binding is never installed; it is only required when asked for.
    external: ['pg-native', ...natives[app]],
    metafile: true,
    logLevel: 'warning',
  });
  const bytes = Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, out]) => `${path.basename(file)} ${(out.bytes / 1024 / 1024).toFixed(1)} MB`);
  for (const name of natives[app]) copyPackage(name, dir, path.join(outdir, 'node_modules'));
  console.log(`${path.relative(process.cwd(), outdir) || '.'}: ${bytes.join(', ')} (${Date.now() - started} ms)`);
}

// The gateway and dex serve the web console's Vite build (built before this step): a copy beside each bundle.
const consoleBuild = path.join(root, 'apps/console/dist');
if (existsSync(path.join(consoleBuild, 'index.html'))) {
  for (const app of ['gateway', 'dex']) cpSync(consoleBuild, path.join(outRoot, `apps/${app}/dist/console`), { recursive: true });
}
