// How `pnpm docs:check` reads a page: which blocks run, where a command ends, what output a page shows
// for it, and when a run differs from that.
import { checkRun, expectation, shellBlocks } from '../scripts/lib/doc-blocks';

const fence = '```';

describe('shellBlocks', () => {
  it('runs sh and bash blocks, skips the marked ones with their reason, and leaves other languages alone', () => {
    const page = [
      '# A page',
      `${fence}sh`,
      'echo one',
      fence,
      '<!-- docs-check: skip (needs a Kubernetes cluster) -->',
      '',
      `${fence}bash`,
      'kubectl apply -k .',
      fence,
      `${fence}js`,
      'console.log(1)',
      fence,
      '<!-- docs-check: skip (only for the next block) -->',
      'Some words in between.',
      `${fence}sh`,
      'echo two',
      fence,
    ].join('\n');
    expect(shellBlocks(page).map((b) => [b.line, b.skip, b.commands.map((c) => c.text)])).toEqual([
      [2, undefined, ['echo one']],
      [7, 'needs a Kubernetes cluster', ['kubectl apply -k .']],
      [15, undefined, ['echo two']],
    ]);
  });

  it('keeps continuation lines, quoted newlines and here-documents in one command, with the line it starts on', () => {
    const page = [
      `   ${fence}sh`,
      '   curl -s http://x \\',
      '     -d \'{"a":1,',
      '          "b":2}\'',
      "   node --input-type=module <<'EOF'",
      '   # not a comment of the page',
      '   console.log(1)',
      '   EOF',
      '   # → 1',
      `   ${fence}`,
    ].join('\n');
    const [block] = shellBlocks(page);
    expect(block?.commands.map((c) => [c.line, c.text, c.expect?.shown])).toEqual([
      [2, 'curl -s http://x \\\n  -d \'{"a":1,\n       "b":2}\'', undefined],
      [5, "node --input-type=module <<'EOF'\n# not a comment of the page\nconsole.log(1)\nEOF", '1'],
    ]);
  });

  it('takes the output shown from the end of the line or the lines after, and a JSON value over several lines', () => {
    const page = [
      `${fence}sh`,
      'curl -s a   # → 404',
      'curl -s b   # the reader only',
      'curl -s c',
      '# → 200 {"a":1,',
      '#        "b":[1,2]}',
      '# an aside',
      fence,
    ].join('\n');
    const [block] = shellBlocks(page);
    expect(block?.commands.map((c) => c.expect?.shown)).toEqual(['404', undefined, '200 {"a":1,        "b":[1,2]}']);
  });

  it('refuses an output shown after no command, naming its line', () => {
    expect(() => shellBlocks([`${fence}sh`, '# → 200', fence].join('\n'))).toThrow(/^line 2: /);
  });
});

describe('checkRun', () => {
  const check = (shown: string, stdout: string, status?: number) => checkRun(expectation(shown), { status, stdout });

  it('compares the status of the last HTTP call', () => {
    expect(check('201', '', 201)).toBeUndefined();
    expect(check('201: created', '', 409)).toBe('status 409, the page shows 201');
    expect(check('200', '')).toBe('status (no HTTP call), the page shows 200');
  });

  it('compares JSON: the fields shown exactly, "…" for anything', () => {
    expect(check('200 {"message":"Authenticated"}', '{"message":"Authenticated"}', 200)).toBeUndefined();
    expect(check('{"message":"Authenticated"}', '{"message":"Authenticated","cause":"x"}')).toBe('$ has cause besides the fields shown');
    expect(check('{"id":"…",…}', '{"id":"x","more":[1]}')).toBeUndefined();
    expect(check('{"info":{"name":"Tasks",…}}', '{"info":{"name":"Notes","version":"1.0.0"}}')).toBe('$.info.name is "Notes", not "Tasks"');
    expect(check('{"message":"File … not found"}', '{"message":"File a.jpg not found"}')).toBeUndefined();
    expect(check('{"steps":[{…},{…}]}', '{"steps":[]}')).toBe('$.steps is [], not like the array shown');
    expect(check('["a",…]', '["a","b","c"]')).toBeUndefined();
    expect(check('3: it may read diary', '3\n')).toBeUndefined();
    expect(check('{"a":1}', 'not json')).toBe('printed "not json", not JSON');
  });

  it('compares a line of text, leaving the words for the reader out', () => {
    expect(check('same bytes', 'same bytes\n')).toBeUndefined();
    expect(check('hello world (after the 303)', 'hello')).toBe('printed "hello", not "hello world"');
    expect(check('403 … but not write it', 'anything', 403)).toBeUndefined();
  });
});
