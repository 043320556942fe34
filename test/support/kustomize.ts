// A small kustomize for the tests, so the manifests are checked without the kustomize binary (and
// compared with it where `kubectl kustomize` exists). It covers what infra/k8s uses: resources
// (files and directories), namespace, images, ConfigMap/Secret generators (literals, env files,
// merge, unhashed names) and strategic-merge patches whose lists merge by `name`. Anything else fails loudly.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

interface Generator {
  name: string;
  behavior?: 'create' | 'merge';
  literals?: string[];
  envs?: string[];
}

interface Kustomization {
  resources?: string[];
  namespace?: string;
  images?: { name: string; newName?: string; newTag?: string }[];
  configMapGenerator?: Generator[];
  secretGenerator?: Generator[];
  generatorOptions?: { disableNameSuffixHash?: boolean; labels?: Record<string, string> };
  patches?: { path: string }[];
}

const SUPPORTED = new Set([
  'apiVersion',
  'kind',
  'resources',
  'namespace',
  'images',
  'configMapGenerator',
  'secretGenerator',
  'generatorOptions',
  'patches',
]);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass', 'IngressClass']);

export function loadYaml(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((object): object is K8sObject => object !== null);
}

export function kustomize(dir: string): K8sObject[] {
  const k = loadYaml(join(dir, 'kustomization.yaml'))[0] as unknown as Kustomization;
  const unsupported = Object.keys(k).filter((key) => !SUPPORTED.has(key));
  if (unsupported.length) throw new Error(`${dir}: the test renderer does not support ${unsupported.join(', ')}`);
  const objects: K8sObject[] = [];
  for (const resource of k.resources ?? []) {
    const path = join(dir, resource);
    objects.push(...(statSync(path).isDirectory() ? kustomize(path) : loadYaml(path)));
  }
  const generators = [
    ...(k.configMapGenerator ?? []).map((g) => ['ConfigMap', g] as const),
    ...(k.secretGenerator ?? []).map((g) => ['Secret', g] as const),
  ];
  if (generators.length && !k.generatorOptions?.disableNameSuffixHash)
    throw new Error(`${dir}: the test renderer needs disableNameSuffixHash`);
  for (const [kind, generator] of generators) generate(objects, kind, generator, dir, k.generatorOptions?.labels);
  for (const { path } of k.patches ?? []) {
    for (const patch of loadYaml(join(dir, path))) {
      const target = objects.find((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
      if (!target) throw new Error(`${dir}/${path}: no ${patch.kind} ${patch.metadata.name} to patch`);
      Object.assign(target, merge(target, patch));
    }
  }
  for (const image of k.images ?? []) setImage(objects, image);
  if (k.namespace) for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
  return objects;
}

function generate(
  objects: K8sObject[],
  kind: 'ConfigMap' | 'Secret',
  generator: Generator,
  dir: string,
  labels?: Record<string, string>,
): void {
  const entries: [string, string][] = [
    ...(generator.literals ?? []).map(pair),
    ...(generator.envs ?? []).flatMap((file) =>
      readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#'))
        .map(pair),
    ),
  ];
  const data = Object.fromEntries(
    kind === 'Secret' ? entries.map(([key, value]) => [key, Buffer.from(value).toString('base64')]) : entries,
  );
  const existing = objects.find((o) => o.kind === kind && o.metadata.name === generator.name);
  if (generator.behavior === 'merge') {
    if (!existing) throw new Error(`${dir}: no ${kind} ${generator.name} to merge into`);
    existing.data = { ...(existing.data as object), ...data };
    return;
  }
  if (existing) throw new Error(`${dir}: ${kind} ${generator.name} exists already`);
  objects.push({
    apiVersion: 'v1',
    kind,
    metadata: { name: generator.name, ...(labels ? { labels } : {}) },
    ...(kind === 'Secret' ? { type: 'Opaque' } : {}),
    data,
  });
}

function pair(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at < 1) throw new Error(`"${text}" is not KEY=value`);
  return [text.slice(0, at), text.slice(at + 1)];
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const named = (list: unknown[]): list is { name: string }[] => list.every((item) => isMap(item) && typeof item.name === 'string');

/** Strategic merge as kustomize does it for the lists used here: items with a name merge by name, other lists are replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (isMap(base) && isMap(patch)) {
    const out: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(patch)) out[key] = key in base ? merge(base[key], value) : value;
    return out;
  }
  if (Array.isArray(base) && Array.isArray(patch) && named(base) && named(patch)) {
    const out = base.map((item) => {
      const change = patch.find((p) => p.name === item.name);
      return change ? merge(item, change) : item;
    });
    // kustomize puts the patch's new items first.
    return [...patch.filter((p) => !base.some((item) => item.name === p.name)), ...out];
  }
  return patch;
}

function setImage(objects: K8sObject[], image: { name: string; newName?: string; newTag?: string }): void {
  for (const container of objects.flatMap(containersOf)) {
    if (container.image.split(/[:@]/)[0] !== image.name) continue;
    const tag = image.newTag ?? container.image.split(':')[1];
    container.image = `${image.newName ?? image.name}${tag ? `:${tag}` : ''}`;
  }
}

export interface Container {
  name: string;
  image: string;
  [field: string]: unknown;
}

/** Every container and init container of a workload's pod template. */
export function containersOf(o: K8sObject): Container[] {
  const spec = (o.spec as { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } } } | undefined)?.template?.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
}
