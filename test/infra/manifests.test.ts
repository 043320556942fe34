// infra/: the Compose stack against the Compose Specification schema, every Kubernetes object of the
// example overlay against the Kubernetes schemas (kubernetes-models), and the rules the manifests
// promise (non-root, read-only, probes, migrations first, no committed secret) checked one by one.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '@pds/config';
import { composeProblems, interpolate, loadCompose, parseEnvFile, variablesOf, type ComposeFile } from '../support/compose';
import { unknownFieldProblems } from '../support/k8s-fields';
import { containersOf, kustomize, type Container, type K8sObject } from '../support/kustomize';

const ROOT = join(__dirname, '..', '..');
const INFRA = join(ROOT, 'infra');
const COMPOSE = join(INFRA, 'compose', 'compose.yaml');
const OVERLAY = join(INFRA, 'k8s', 'overlays', 'example');

/** The processes the one image runs, by the entry file each command names. */
const ENTRIES = ['gateway', 'dex'].flatMap((app) => ['main', 'worker', 'migrate'].map((entry) => `apps/${app}/dist/${entry}.js`));
const isMigration = (entry: string) => entry.endsWith('/migrate.js');
const tracked = (path: string) => execFileSync('git', ['ls-files', path], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const onPath = (command: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

describe('infra/Dockerfile', () => {
  const dockerfile = readFileSync(join(INFRA, 'Dockerfile'), 'utf8');
  const instructions = (name: string) =>
    dockerfile
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((line) => line.startsWith(`${name} `));

  it('builds in stages and runs as a non-root user with a health check on /healthz', () => {
    expect(instructions('FROM').length).toBeGreaterThanOrEqual(2);
    const [user] = instructions('USER');
    expect(user).toMatch(/^USER [1-9]\d*(:[1-9]\d*)?$/);
    expect(instructions('HEALTHCHECK').join('\n')).toContain('/healthz');
    // The last stage holds the bundles and migrations only: node runs them, nothing else is installed.
    expect(instructions('ENTRYPOINT')).toEqual(['ENTRYPOINT ["node"]']);
    const runtime = dockerfile
      .slice(dockerfile.lastIndexOf('\nFROM '))
      .split('\n')
      .filter((line) => !line.startsWith('#'));
    expect(runtime.filter((line) => /pnpm|npm install|node_modules/.test(line))).toEqual([]);
  });

  it('keeps the build context free of local state and secrets', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.git', '**/node_modules', '**/dist', '.data', '**/.env', 'infra/k8s/**/*.secrets.env', 'infra/compose/tls'])
      expect(ignored).toContain(entry);
  });

  it('names every process that Compose and Kubernetes start', () => {
    for (const entry of ENTRIES) expect(dockerfile).toContain(entry);
  });

  // .ci/run builds before it tests, so there the bundles exist; a checkout that never built skips this.
  (existsSync(join(ROOT, 'apps', 'gateway', 'dist')) ? it : it.skip)('starts only bundles that pnpm build emits', () => {
    expect(ENTRIES.filter((entry) => !existsSync(join(ROOT, entry)))).toEqual([]);
  });
});

describe('infra/compose', () => {
  const example = parseEnvFile(join(INFRA, 'compose', '.env.example'));
  // The example leaves secrets empty on purpose; a filled-in .env has a value for each.
  const env = Object.fromEntries(Object.entries(example).map(([name, value]) => [name, value || `example-${name.toLowerCase()}`]));
  let compose: ComposeFile;
  beforeAll(() => {
    compose = loadCompose(COMPOSE, env);
  });
  const services = () => Object.entries(compose.services);
  const appServices = () => services().filter(([, s]) => s.image === env.PDS_IMAGE);

  it('is valid against the Compose Specification schema', () => {
    expect(composeProblems(compose)).toEqual([]);
  });

  it('refuses to start without each secret, naming it', () => {
    const text = readFileSync(COMPOSE, 'utf8');
    for (const secret of ['MASTER_KEY', 'POSTGRES_PASSWORD', 'REDIS_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY', 'ADMIN_TOKEN']) {
      expect(() => interpolate(text, { ...env, [secret]: '' })).toThrow(secret);
    }
  });

  it('reads only variables that .env.example lists or that have a default, and commits no .env', () => {
    const undocumented = [...variablesOf(readFileSync(COMPOSE, 'utf8'))]
      .filter(([name, v]) => !v.hasDefault && !(name in example))
      .map(([name]) => name);
    expect(undocumented).toEqual([]);
    for (const secret of ['MASTER_KEY', 'POSTGRES_PASSWORD', 'REDIS_PASSWORD', 'S3_SECRET_KEY', 'ADMIN_TOKEN'])
      expect(example[secret]).toBe('');
    expect(tracked('infra/compose').filter((f) => f.endsWith('/.env') || f.includes('/tls/'))).toEqual([]);
  });

  it('runs two gateways, dex and both workers from one image, each after its migration has completed', () => {
    const commands = appServices().map(([, s]) => (s.command as string[])[0]);
    expect(commands.filter((c) => c === 'apps/gateway/dist/main.js')).toHaveLength(2);
    expect(new Set(commands)).toEqual(new Set(ENTRIES));
    for (const [name, service] of appServices()) {
      if (isMigration((service.command as string[])[0]!)) continue;
      const dependsOn = service.depends_on as Record<string, { condition: string }>;
      const migrations = Object.entries(dependsOn).filter(([dep]) => dep.startsWith('migrate-'));
      expect([name, migrations.map(([, d]) => d.condition)]).toEqual([name, ['service_completed_successfully']]);
    }
  });

  it('runs every process of the image read-only, unprivileged and as a non-root user', () => {
    for (const [name, service] of appServices()) {
      expect([name, service.read_only, service.cap_drop, service.security_opt]).toEqual([name, true, ['ALL'], ['no-new-privileges:true']]);
      expect(service.user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
    }
  });

  it('gives gateways only the gateway database and dex only its own', () => {
    for (const [name, service] of appServices()) {
      const vars = Object.keys(service.environment as object);
      expect([name, vars.includes('DATABASE_URL') && vars.includes('DEX_DATABASE_URL')]).toEqual([name, false]);
    }
  });

  it('offers a Redis Cluster (redis-cluster.yaml): valid, and every process that uses Redis gets its nodes instead of REDIS_URL', () => {
    const override = loadCompose(join(INFRA, 'compose', 'redis-cluster.yaml'), env);
    expect(composeProblems(override)).toEqual([]);
    const usersOfRedis = services().filter(([, s]) => s.environment && 'REDIS_URL' in (s.environment as object));
    expect(usersOfRedis.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2', 'gateway-worker', 'dex', 'dex-worker']);
    for (const [name, service] of usersOfRedis) {
      // Compose merges an override's environment into the service's.
      const merged = { ...(service.environment as object), ...(override.services[name]?.environment as object) } as Record<string, string>;
      expect([name, merged.REDIS_URL, merged.REDIS_CLUSTER_NODES?.split(',').length]).toEqual([name, '', 6]);
    }
    const nodes = Object.keys(override.services).filter((name) => /^redis-\d$/.test(name));
    expect(Object.keys((override.services.redis as { depends_on: object }).depends_on)).toEqual(nodes);
  });

  it('believes exactly its own proxy: one hop, whose X-Forwarded-For ends with the address it saw', () => {
    for (const [name, service] of appServices()) {
      // Migrations serve nothing.
      if (isMigration((service.command as string[])[0]!)) continue;
      const trust = (service.environment as Record<string, string>).TRUST_PROXY;
      expect([name, trust, loadConfig({ TRUST_PROXY: trust }).TRUST_PROXY]).toEqual([name, '1', 1]);
    }
    // Only the proxy is published: nothing reaches a process without passing it.
    expect(
      services()
        .filter(([, s]) => s.ports)
        .map(([name]) => name),
    ).toEqual(['proxy']);
    for (const snippet of ['gateways.conf', 'dex.conf']) {
      const text = readFileSync(join(INFRA, 'compose', 'nginx', 'snippets', snippet), 'utf8');
      expect([snippet, /X-Forwarded-For \$proxy_add_x_forwarded_for;/.test(text)]).toEqual([snippet, true]);
    }
  });

  it('routes the wildcard domain to both gateways and dex.<domain> to dex', () => {
    const nginx = join(INFRA, 'compose', 'nginx');
    const upstreams = readFileSync(join(nginx, 'snippets', 'upstreams.conf'), 'utf8');
    const gateways = appServices()
      .filter(([, s]) => (s.command as string[])[0] === 'apps/gateway/dist/main.js')
      .map(([name]) => name);
    for (const gateway of gateways) expect(upstreams).toContain(`server ${gateway}:8080`);
    for (const mode of ['http', 'https']) {
      const template = readFileSync(join(nginx, `${mode}.conf.template`), 'utf8');
      expect(template).toContain('server_name ${CLUSTER_DOMAIN} .${CLUSTER_DOMAIN};');
      expect(template).toContain('server_name dex.${CLUSTER_DOMAIN};');
    }
  });
});

describe('infra/k8s (the example overlay)', () => {
  let objects: K8sObject[];
  let work: string;
  beforeAll(() => {
    // The overlay's Secrets come from git-ignored env files: render a copy made from the examples.
    work = mkdtempSync(join(tmpdir(), 'pds-k8s-'));
    cpSync(join(INFRA, 'k8s'), join(work, 'k8s'), { recursive: true });
    const overlay = join(work, 'k8s', 'overlays', 'example');
    for (const file of readdirSync(overlay).filter((f) => f.endsWith('.secrets.env.example'))) {
      copyFileSync(join(overlay, file), join(overlay, file.replace(/\.example$/, '')));
    }
    objects = kustomize(overlay);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const named = (kind: string, name: string) => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (!found) throw new Error(`no ${kind} ${name}`);
    return found;
  };
  const podSpec = (o: K8sObject) => (o.spec as { template: { spec: Record<string, unknown> & { containers: Container[] } } }).template.spec;
  const podLabels = (o: K8sObject) => (o.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
  const workloads = () => [...ofKind('Deployment'), ...ofKind('Job')];
  const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
    Object.entries(selector).every(([k, v]) => labels[k] === v);

  it('validates every object against the Kubernetes schemas', () => {
    expect(objects.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const o of objects) {
      const group = o.apiVersion.includes('/') ? o.apiVersion : `v1`;
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const model = require(`kubernetes-models/${group}/${o.kind}`) as Record<string, new (data: unknown) => { validate(): void }>;
      try {
        new model[o.kind]!(o).validate();
      } catch (error) {
        problems.push(`${o.kind} ${o.metadata.name}: ${(error as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('has no field that Kubernetes does not know (strict validation)', () => {
    expect(unknownFieldProblems(objects, ROOT)).toEqual([]);
    // Type-checking every model takes a few seconds on a busy machine.
  }, 60_000);

  (onPath('kubectl') ? it : it.skip)('renders exactly as kubectl kustomize does', () => {
    const rendered = parseAllDocuments(
      execFileSync('kubectl', ['kustomize', join(work, 'k8s', 'overlays', 'example')], { encoding: 'utf8' }),
    ).map((d) => d.toJS() as K8sObject);
    const byName = (list: K8sObject[]) => Object.fromEntries(list.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
    expect(isDeepStrictEqual(byName(objects), byName(rendered))).toBe(true);
  });

  it('runs every container read-only, non-root, without privilege escalation or capabilities, with /tmp on an emptyDir', () => {
    for (const workload of workloads()) {
      const spec = podSpec(workload);
      expect([
        workload.metadata.name,
        spec.automountServiceAccountToken,
        (spec.securityContext as { runAsNonRoot?: boolean }).runAsNonRoot,
      ]).toEqual([workload.metadata.name, false, true]);
      const tmp = (spec.volumes as { name: string; emptyDir?: object }[]).find((v) => v.emptyDir);
      for (const c of containersOf(workload)) {
        expect([c.name, c.securityContext]).toEqual([
          c.name,
          { readOnlyRootFilesystem: true, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        ]);
        expect((c.volumeMounts as { name: string; mountPath: string }[]).find((m) => m.mountPath === '/tmp')?.name).toBe(tmp?.name);
      }
    }
  });

  it('gives every container CPU and memory requests and limits, and one image to all', () => {
    const containers = workloads().flatMap(containersOf);
    for (const c of containers) {
      const { requests, limits } = c.resources as { requests: Record<string, string>; limits: Record<string, string> };
      expect([c.name, Object.keys(requests).sort(), Object.keys(limits).sort()]).toEqual([c.name, ['cpu', 'memory'], ['cpu', 'memory']]);
    }
    expect(new Set(containers.map((c) => c.image))).toEqual(new Set(['registry.example.org/pds/pds-cluster:1.0.0']));
    expect(new Set(containers.map((c) => (c.args as string[])[0]))).toEqual(new Set(ENTRIES));
  });

  it('runs at least two gateways, scaled by an HPA and kept up by a PodDisruptionBudget', () => {
    const gateway = named('Deployment', 'pds-gateway');
    expect((gateway.spec as { replicas: number }).replicas).toBeGreaterThanOrEqual(2);
    const hpa = ofKind('HorizontalPodAutoscaler').find(
      (h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === 'pds-gateway',
    );
    expect((hpa?.spec as { minReplicas: number }).minReplicas).toBeGreaterThanOrEqual(2);
    const pdb = ofKind('PodDisruptionBudget').find((p) =>
      matches((p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, podLabels(gateway)),
    );
    expect((pdb?.spec as { minAvailable: number }).minAvailable).toBeGreaterThanOrEqual(1);
  });

  it('probes gateway and dex: readiness on /readyz, liveness on /healthz; workers: liveness on /healthz of the metrics port', () => {
    for (const name of ['pds-gateway', 'pds-dex']) {
      const [c] = podSpec(named('Deployment', name)).containers;
      expect([
        name,
        (c!.readinessProbe as { httpGet: { path: string } }).httpGet.path,
        (c!.livenessProbe as { httpGet: { path: string } }).httpGet.path,
      ]).toEqual([name, '/readyz', '/healthz']);
    }
    for (const name of ['pds-gateway-worker', 'pds-dex-worker']) {
      const [c] = podSpec(named('Deployment', name)).containers;
      expect([name, (c!.livenessProbe as { httpGet: object }).httpGet]).toEqual([name, { path: '/healthz', port: 'metrics' }]);
    }
  });

  it('migrates both databases in a Job that runs before the rollout', () => {
    const job = named('Job', 'pds-migrate');
    expect(job.metadata.annotations?.['argocd.argoproj.io/hook']).toBe('PreSync');
    expect(podSpec(job).restartPolicy).toBe('Never');
    expect(containersOf(job).map((c) => c.args)).toEqual([['apps/gateway/dist/migrate.js'], ['apps/dex/dist/migrate.js']]);
  });

  it('refers only to ConfigMaps, Secrets and Services that exist, and keeps each database to its own processes', () => {
    for (const workload of workloads()) {
      for (const c of containersOf(workload)) {
        const refs = (c.envFrom as { configMapRef?: { name: string }; secretRef?: { name: string } }[]).map((e) =>
          e.configMapRef ? ['ConfigMap', e.configMapRef.name] : ['Secret', e.secretRef!.name],
        );
        for (const [kind, name] of refs) expect(() => named(kind!, name!)).not.toThrow();
        const secrets = refs.filter(([kind]) => kind === 'Secret').map(([, name]) => name);
        expect([c.name, secrets.includes('pds-gateway-secrets') && secrets.includes('pds-dex-secrets')]).toEqual([c.name, false]);
      }
    }
    for (const service of ofKind('Service')) {
      const selector = (service.spec as { selector: Record<string, string> }).selector;
      const target = ofKind('Deployment').find((d) => matches(selector, podLabels(d)));
      const portNames = podSpec(target!).containers.flatMap((c) => (c.ports as { name: string }[]).map((p) => p.name));
      for (const port of (service.spec as { ports: { targetPort: string }[] }).ports) expect(portNames).toContain(port.targetPort);
    }
  });

  it('believes exactly its own proxy: the Ingress controller in front, one hop', () => {
    const trust = (named('ConfigMap', 'pds-config').data as Record<string, string>).TRUST_PROXY;
    expect([trust, loadConfig({ TRUST_PROXY: trust }).TRUST_PROXY]).toEqual(['1', 1]);
  });

  it('routes the cluster domain, every instance address and dex through the Ingress', () => {
    const domain = (named('ConfigMap', 'pds-config').data as Record<string, string>).CLUSTER_DOMAIN;
    const rules = (
      named('Ingress', 'pds').spec as {
        rules: { host: string; http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] } }[];
      }
    ).rules;
    const backend = (host: string) => rules.find((r) => r.host === host)?.http.paths[0]?.backend.service;
    expect(backend(domain!)?.name).toBe('pds-gateway');
    expect(backend(`*.${domain}`)?.name).toBe('pds-gateway');
    expect(backend(`dex.${domain}`)?.name).toBe('pds-dex');
    for (const rule of rules) {
      const { name, port } = rule.http.paths[0]!.backend.service;
      expect((named('Service', name).spec as { ports: { name: string }[] }).ports.map((p) => p.name)).toContain(port.name);
    }
  });

  it('labels what the migration Job needs, so it can be applied before the Job', () => {
    const config = objects
      .filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'config')
      .map((o) => `${o.kind}/${o.metadata.name}`);
    const job = named('Job', 'pds-migrate');
    const needed = [
      `ServiceAccount/${podSpec(job).serviceAccountName as string}`,
      'Namespace/pds',
      ...containersOf(job).flatMap((c) =>
        (c.envFrom as { configMapRef?: { name: string }; secretRef?: { name: string } }[]).map((e) =>
          e.configMapRef ? `ConfigMap/${e.configMapRef.name}` : `Secret/${e.secretRef!.name}`,
        ),
      ),
    ];
    expect(needed.filter((n) => !config.includes(n))).toEqual([]);
  });

  it("keeps the gateways' admin port out of every Service and Ingress, and ADMIN_TOKEN in a Secret only gateways read", () => {
    const gateway = podSpec(named('Deployment', 'pds-gateway')).containers[0]!;
    expect((gateway.ports as { name: string; containerPort: number }[]).find((p) => p.name === 'admin')?.containerPort).toBe(8090);
    const exposed = ofKind('Service').flatMap((service) =>
      (service.spec as { ports: { port: number; targetPort: unknown }[] }).ports.map(
        (p) => `${service.metadata.name} ${p.port}→${String(p.targetPort)}`,
      ),
    );
    expect(exposed.filter((port) => /admin|8090/.test(port))).toEqual([]);
    expect(JSON.stringify(ofKind('Ingress'))).not.toMatch(/admin|8090/);
    const readers = workloads().filter((w) =>
      podSpec(w).containers.some((c) => JSON.stringify(c.envFrom ?? []).includes('pds-admin-secrets')),
    );
    expect(readers.map((w) => w.metadata.name)).toEqual(['pds-gateway']);
  });

  it('commits no secret: only examples with empty values, and the real files are git-ignored', () => {
    const files = tracked('infra/k8s');
    expect(files.filter((f) => f.endsWith('.secrets.env'))).toEqual([]);
    for (const example of files.filter((f) => f.endsWith('.secrets.env.example'))) {
      expect([example, Object.values(parseEnvFile(join(ROOT, example))).filter(Boolean)]).toEqual([example, []]);
      const real = example.replace(/\.example$/, '');
      expect(execFileSync('git', ['check-ignore', real], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe(real);
    }
    expect(
      ofKind('Secret')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['pds-admin-secrets', 'pds-dex-secrets', 'pds-gateway-secrets', 'pds-shared-secrets']);
    expect(existsSync(join(OVERLAY, 'kustomization.yaml'))).toBe(true);
  });
});
