// Lines written many times a second (access lines) go out together: what the destination receives, and
// when; and that nothing waiting is lost when the process exits or stops gracefully.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { BATCH_LENGTH, BATCH_MS, createLogger, flushLogs, lineBatchOf } from '../src';

/** A logger whose destination keeps each write it receives. */
function recording() {
  const writes: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString());
      done();
    },
  });
  const batch = lineBatchOf(createLogger({ destination }));
  if (!batch) throw new Error('a logger with a destination has a batch');
  return { batch, writes };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a batch of lines', () => {
  it('writes the lines of an interval in one write, BATCH_MS after the first, and nothing before', async () => {
    const { batch, writes } = recording();
    batch.add('one\n');
    batch.add('two\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([]);
    await sleep(BATCH_MS * 3);
    expect(writes).toEqual(['one\ntwo\n']);
    batch.add('three\n');
    await sleep(BATCH_MS * 3);
    expect(writes).toEqual(['one\ntwo\n', 'three\n']);
  });

  it('writes at once when BATCH_LENGTH characters wait', () => {
    const { batch, writes } = recording();
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < BATCH_LENGTH / line.length; i++) batch.add(line);
    expect(writes).toEqual([line.repeat(BATCH_LENGTH / line.length)]);
  });

  it('is written out by flushLogs, as a graceful stop calls it', async () => {
    const { batch, writes } = recording();
    batch.add('last\n');
    await flushLogs();
    expect(writes).toEqual(['last\n']);
  });

  it('is written out when the process exits, on stdout as the gateway writes there', () => {
    const script = `
      const { createLogger, lineBatchOf } = require(${JSON.stringify(path.join(__dirname, '../src'))});
      const logger = createLogger({ name: 'gateway' });
      logger.info('before');
      lineBatchOf(logger).add('{"msg":"waiting"}\\n');
      process.exit(0);`;
    const out = execFileSync(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', '-e', script], {
      encoding: 'utf8',
      cwd: path.join(__dirname, '..'),
    });
    // Sorted: 'before' may still be in an asynchronous write (a thread of libuv's pool) when the exit
    // handler writes the batch synchronously, so either may reach the pipe first.
    expect(
      out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg)
        .sort(),
    ).toEqual(['before', 'waiting']);
  });
});
