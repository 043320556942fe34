// Files put into an instance the way any API client does (the three upload steps), for tests that
// need many of them or an upload left unfinished.
export interface Owner {
  instanceUrl: string;
  token: string;
}

async function ok(response: Response, what: string): Promise<Response> {
  if (!response.ok) throw new Error(`${what}: ${response.status} ${await response.text()}`);
  return response;
}

/** Uploads `content` as `name`; with `complete: false` only the first step (the file stays New). Answers the fileId. */
export async function uploadThroughApi(
  owner: Owner,
  name: string,
  content: string | Uint8Array,
  { complete = true } = {},
): Promise<string> {
  const headers = { 'X-Auth-Token': owner.token, 'Content-Type': 'application/json' };
  const created = await ok(
    await fetch(`${owner.instanceUrl}/api/v2.6/files/upload`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name, source: 'console' }),
    }),
    `upload ${name}`,
  );
  const { fileId, contentUrl } = (await created.json()) as { fileId: string; contentUrl: string };
  if (!complete) return fileId;
  await ok(
    await fetch(contentUrl, {
      method: 'PUT',
      headers: { 'x-amz-server-side-encryption': 'AES256' },
      body: typeof content === 'string' ? content : new Uint8Array(content),
    }),
    `bytes of ${name}`,
  );
  await ok(
    await fetch(`${owner.instanceUrl}/api/v2.6/files/file/${encodeURIComponent(fileId)}/complete`, { method: 'PUT', headers }),
    `complete ${name}`,
  );
  return fileId;
}

/** Runs `work` over every item, `parallel` at a time. */
export async function inParallel<T>(items: T[], parallel: number, work: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}
