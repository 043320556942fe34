// Strict field checking for Kubernetes objects, as `kubectl apply --validate=strict` would do on a
// cluster: the Kubernetes JSON schemas accept unknown fields (so a misspelt `readOnlyRootFileSystem`
// passes them and is silently dropped), but kubernetes-models' TypeScript types do not. Each object
// becomes an object literal typed with its model; TypeScript's excess-property check names any field
// the API does not have.
import { join } from 'node:path';
import ts from 'typescript';
import type { K8sObject } from './kustomize';

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  types: [],
};

export function unknownFieldProblems(objects: K8sObject[], projectDir: string): string[] {
  // Inside the project, so `kubernetes-models` resolves from its node_modules; never written to disk.
  const file = join(projectDir, '__k8s_manifests__.ts');
  const source = objects
    .map((o, i) => {
      const group = o.apiVersion.includes('/') ? o.apiVersion : 'v1';
      return `import type { I${o.kind} as T${i} } from 'kubernetes-models/${group}/${o.kind}';\nexport const o${i}: T${i} = ${JSON.stringify(o)};`;
    })
    .join('\n');
  const host = ts.createCompilerHost(OPTIONS);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => (name === file ? source : readFile(name));
  host.fileExists = (name) => name === file || ts.sys.fileExists(name);
  host.getSourceFile = (name, language, onError, create) =>
    name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, onError, create);
  const program = ts.createProgram([file], OPTIONS, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const index =
      d.file && d.start !== undefined
        ? Number(/export const o(\d+)/.exec(source.slice(source.lastIndexOf('export const o', d.start)))?.[1])
        : NaN;
    const where = Number.isNaN(index) ? '' : `${objects[index]!.kind} ${objects[index]!.metadata.name}: `;
    return where + ts.flattenDiagnosticMessageText(d.messageText, ' ');
  });
}
