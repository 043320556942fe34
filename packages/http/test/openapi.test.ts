// The OpenAPI builder: paths in OpenAPI form, request schemas from the validating zod schemas (input
// side), the shared error body, and no operation described twice.
import { z } from 'zod';
import { openApiDocument, openApiPath, type DescribeAccess } from '../src/openapi';
import { json, type AnyRoute } from '../src/routing/route';

const info = { title: 't', version: '1', description: 'd' };
type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; required: boolean }[];
        requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
        responses: Record<string, unknown>;
        security: unknown[];
      }
    >
  >;
};

describe('openApiPath', () => {
  it('turns express parameters and wildcards into OpenAPI ones', () => {
    expect(openApiPath('/api/v2.6/data/:namespace/*endpoint')).toEqual({
      path: '/api/v2.6/data/{namespace}/{endpoint}',
      params: [
        { name: 'namespace', wildcard: false },
        { name: 'endpoint', wildcard: true },
      ],
    });
    expect(openApiPath('/plain').path).toBe('/plain');
  });
});

describe('openApiDocument', () => {
  const body = z.object({ name: z.string().max(10), when: z.union([z.number(), z.string()]).transform(String) });
  const describe: DescribeAccess = (access) => (access === 'token' ? { auth: 'instanceToken', note: 'A token.' } : { auth: 'none' });
  const op: AnyRoute = {
    method: 'post',
    path: ['/things/:id', '/v3/things/:id'],
    tag: 't',
    access: 'token',
    summary: 's',
    handle: async () => json({ id: '1' }, 201),
    body,
    query: z.object({ take: z.coerce.number().int().max(5).default(1) }),
    responses: { 201: { description: 'made', body: z.object({ id: z.string() }) } },
  };

  it('describes a route with its parameters, the input side of the body schema and the shared error body; an alias refers to it', () => {
    const doc = openApiDocument(info, [op], describe) as unknown as Doc;
    expect(doc.paths['/v3/things/{id}']).toEqual({ $ref: '#/paths/~1things~1%7Bid%7D' });
    const operation = doc.paths['/things/{id}']!.post!;
    expect(operation.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      {
        name: 'take',
        in: 'query',
        required: false,
        schema: { type: 'integer', maximum: 5, default: 1, minimum: expect.any(Number) as number },
      },
    ]);
    const schema = operation.requestBody!.content['application/json']!.schema;
    expect(schema.required).toEqual(['name', 'when']);
    expect((schema.properties as Record<string, unknown>).when).toEqual({ type: ['number', 'string'] });
    expect(operation.responses['4XX']).toEqual({
      description: expect.any(String) as string,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    });
    expect(operation.security).toEqual([{ instanceToken: [] }]);
  });

  it('refuses an operation declared twice', () => {
    expect(() => openApiDocument(info, [op, { ...op, path: '/things/:id' }], describe)).toThrow('POST /things/:id is declared twice');
  });

  it('documents what the handler checks by hand, says who may call, and leaves hidden routes out', () => {
    const documented: AnyRoute = { ...op, path: '/by-hand', body: undefined, query: undefined, documents: { body } };
    const hidden: AnyRoute = { ...op, path: '/page', hidden: true };
    const doc = openApiDocument(info, [documented, hidden], describe) as unknown as Doc & {
      paths: Record<string, Record<string, { description?: string }>>;
    };
    expect(doc.paths['/by-hand']!.post!.requestBody!.content['application/json']!.schema.required).toEqual(['name', 'when']);
    expect(doc.paths['/by-hand']!.post!.description).toBe('A token.');
    expect(doc.paths['/page']).toBeUndefined();
  });
});
