// What signing an S3 address costs the gateway: minio-js' presignedGetObject, which the S3 store used
// for GETs, against the store's own presigner (packages/storage/src/sigv4.ts), for a GET, a GET with
// the response headers a download fixes, and an upload's PUT with its SSE header. Reports this
// process's CPU per address in interleaved rounds; nothing is sent (signing needs no service).
//   npx tsx --conditions=@pds/source scripts/bench/presign.ts [N]
import { Client } from 'minio';
import { SigV4Presigner } from '@pds/storage';

const ADDRESSES = Number(process.argv[2] ?? 20_000);
const ROUNDS = 3;

const service = {
  endpoint: new URL('http://127.0.0.1:9000'),
  bucket: 'pds-files',
  region: 'us-east-1',
  accessKey: 'AKIAEXAMPLE',
  secretKey: 'secret',
};
const minio = new Client({
  endPoint: '127.0.0.1',
  port: 9000,
  useSSL: false,
  accessKey: 'AKIAEXAMPLE',
  secretKey: 'secret',
  region: 'us-east-1',
  pathStyle: true,
});
const presigner = new SigV4Presigner(service);
const DOWNLOAD = { 'response-content-type': 'image/jpeg', 'response-content-disposition': 'attachment; filename="holiday.jpg"' };
const key = (i: number) => `alice.pds.example/file-${i}.jpg`;

const ways: [string, (i: number) => Promise<string> | string][] = [
  ['minio-js GET', (i) => minio.presignedGetObject(service.bucket, key(i), 600, {}, new Date())],
  ['presigner GET', (i) => presigner.presign({ method: 'GET', key: key(i), expiresSeconds: 600, now: new Date() })],
  ['minio-js GET, download headers', (i) => minio.presignedGetObject(service.bucket, key(i), 600, DOWNLOAD, new Date())],
  [
    'presigner GET, download headers',
    (i) => presigner.presign({ method: 'GET', key: key(i), query: DOWNLOAD, expiresSeconds: 600, now: new Date() }),
  ],
  [
    'presigner PUT, SSE header',
    (i) =>
      presigner.presign({
        method: 'PUT',
        key: key(i),
        headers: { 'x-amz-server-side-encryption': 'AES256' },
        expiresSeconds: 600,
        now: new Date(),
      }),
  ],
];

async function cpuPerAddress(sign: (i: number) => Promise<string> | string): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < ADDRESSES; i++) await sign(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / ADDRESSES;
}

async function main(): Promise<void> {
  const results = new Map<string, number[]>(ways.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, sign] of ways) results.get(name)!.push(await cpuPerAddress(sign));
  }
  console.log(`CPU per address (µs), ${ADDRESSES} addresses a round, ${ROUNDS} interleaved rounds`);
  for (const [name, rounds] of results) console.log(`${name.padEnd(34)} ${rounds.map((us) => us.toFixed(1).padStart(6)).join(' ')}`);
}

void main();
