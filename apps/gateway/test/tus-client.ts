// A tus client process for the resume tests: tus-js-client (as an app or a phone SDK would use it) uploads
// one file from disk, remembering its upload's address by the file's fingerprint in a file of its own, so
// a client started again after this one was killed resumes where the server says it got. Settings come
// as JSON in TUS_CLIENT; it prints one JSON line per event: {progress}, {success}, {error}.
import { createReadStream } from 'node:fs';
import type { LookupFunction } from 'node:net';
import * as tus from 'tus-js-client';
import { DefaultHttpStack, Upload, type UploadOptions } from 'tus-js-client';

// Node's build exports its file-backed URL storage, which the shared type declarations leave out.
const { FileUrlStorage } = tus as unknown as { FileUrlStorage: new (path: string) => NonNullable<UploadOptions['urlStorage']> };

interface Settings {
  endpoint: string;
  file: string;
  urlStorage: string;
  token: string;
  fileId: string;
  /** Progress is printed every this many bytes. */
  every: number;
}

const settings = JSON.parse(process.env.TUS_CLIENT ?? '{}') as Settings;
// Instance addresses (*.pds.test) do not resolve: they are dialled at loopback, as a DNS wildcard would.
const lookup: LookupFunction = (_host, options, callback) =>
  options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
const say = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);

let printed = 0;
const upload = new Upload(createReadStream(settings.file), {
  endpoint: settings.endpoint,
  headers: { 'X-Auth-Token': settings.token },
  metadata: { fileId: settings.fileId, filetype: 'application/octet-stream' },
  urlStorage: new FileUrlStorage(settings.urlStorage),
  httpStack: new DefaultHttpStack({ lookup }),
  retryDelays: [0, 200, 500, 1000, 2000, 3000, 5000],
  onProgress: (sent) => {
    if (sent - printed < settings.every) return;
    printed = sent;
    say({ progress: sent });
  },
  onSuccess: () => say({ success: true, url: upload.url }),
  onError: (error) => say({ error: error.message }),
});

void upload.findPreviousUploads().then((previous) => {
  if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
  upload.start();
});
