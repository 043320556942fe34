// The shell walkthroughs of the Markdown docs, as `pnpm docs:check` reads them: the sh blocks of a page, each
// cut into commands, each command with the output its page shows for it, and the comparison of that output
// with what a run printed.
//
// What a page writes, and what is checked:
// - a fenced block marked sh or bash runs; `<!-- docs-check: skip (reason) -->` on a line before its fence
//   (blank lines may come between) skips it, and the reason is printed;
// - a comment `# → …` at the end of a command's last line, or on the lines right after the command, is the
//   output shown for it: an optional HTTP status (checked against the command's last curl call), then
//   either a JSON value or a line of text (checked against what the command printed), then, optionally,
//   words for the reader after ": ", " (", " — " or " …" (or in their place). In JSON, `…` stands for anything: `"…"` any value,
//   a `…` member or element any further members or elements; objects and arrays without one must match
//   exactly. A JSON value may go on over the following `#` lines.
// - other comments are for the reader only.

export interface DocCommand {
  /** The command as the page writes it (continuation lines, quoted newlines and here-documents included). */
  text: string;
  /** 1-based line in the page where it starts. */
  line: number;
  expect?: Expectation;
}

export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** Why the page says it cannot run here; undefined for a block that runs. */
  skip?: string;
  commands: DocCommand[];
}

export interface Expectation {
  /** The text after the arrow, for messages. */
  shown: string;
  status?: number;
  json?: Pattern;
  text?: string;
}

/** A JSON value in which `…` stands for anything (see the file comment). */
export type Pattern =
  | { kind: 'any' }
  | { kind: 'value'; value: string | number | boolean | null }
  | { kind: 'text'; regex: RegExp }
  | { kind: 'object'; members: Array<[string, Pattern]>; open: boolean }
  | { kind: 'array'; items: Array<Pattern | 'rest'> };

const ELLIPSIS = '…';
const SKIP = /<!--\s*docs-check:\s*skip\s*\((.+)\)\s*-->/;
const FENCE = /^(\s*)```(\w*)\s*$/;
const ARROW = /^#\s*→\s?/;

/** The sh blocks of a Markdown page, in order. */
export function shellBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  let skip: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const reason = SKIP.exec(line);
    if (reason) {
      skip = reason[1];
      continue;
    }
    const fence = FENCE.exec(line);
    if (!fence) {
      if (line.trim() !== '') skip = undefined;
      continue;
    }
    const [indent, language] = [fence[1] as string, fence[2] as string];
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i] as string); i++) body.push((lines[i] as string).slice(indent.length));
    if (language === 'sh' || language === 'bash') blocks.push({ line: start + 1, skip, commands: commands(body, start + 2) });
    skip = undefined;
  }
  return blocks;
}

/** Where a line's shell comment starts (outside quotes), given the quote left open by the lines before. */
function scan(line: string, open: '' | "'" | '"'): { open: '' | "'" | '"'; comment: number } {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (open === "'") {
      if (c === "'") open = '';
    } else if (open === '"') {
      if (c === '\\') i++;
      else if (c === '"') open = '';
    } else if (c === '\\') i++;
    else if (c === "'" || c === '"') open = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return { open, comment: i };
  }
  return { open, comment: -1 };
}

/** Cuts a block's lines into commands, each with the output shown for it. */
export function commands(lines: string[], firstLine: number): DocCommand[] {
  const out: DocCommand[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trim() === '' || line.trimStart().startsWith('#')) {
      if (ARROW.test(line.trimStart())) throw new Error(`line ${firstLine + i}: "# →" follows no command`);
      i++;
      continue;
    }
    const start = i;
    let open: '' | "'" | '"' = '';
    let inline: string | undefined;
    let heredoc: string | undefined;
    for (;;) {
      const current = lines[i] as string;
      const scanned = scan(current, open);
      open = scanned.open;
      const code = scanned.comment >= 0 ? current.slice(0, scanned.comment) : current;
      const comment = scanned.comment >= 0 ? current.slice(scanned.comment) : '';
      heredoc ??= /<<-?\s*['"]?(\w+)['"]?/.exec(code)?.[1];
      i++;
      const continues = open !== '' || /(\\|\||&&)\s*$/.test(code);
      if (!continues) {
        if (ARROW.test(comment)) inline = comment;
        break;
      }
      if (i >= lines.length) throw new Error(`line ${firstLine + start}: the command does not end`);
    }
    if (heredoc) {
      while (i < lines.length && (lines[i] as string).trim() !== heredoc) i++;
      if (i >= lines.length) throw new Error(`line ${firstLine + start}: here-document ${heredoc} does not end`);
      i++;
    }
    const text = lines.slice(start, i).join('\n');
    let shown = inline?.replace(ARROW, '');
    if (shown === undefined && i < lines.length && ARROW.test(lines[i] as string)) {
      shown = (lines[i++] as string).replace(ARROW, '');
      // A JSON value may go on over the next comment lines.
      while (incomplete(shown) && i < lines.length && (lines[i] as string).startsWith('#')) shown += (lines[i++] as string).slice(1);
    }
    out.push({ text, line: firstLine + start, expect: shown === undefined ? undefined : expectationAt(shown.trim(), firstLine + start) });
  }
  return out;
}

function expectationAt(shown: string, line: number): Expectation {
  try {
    return expectation(shown);
  } catch (error) {
    throw new Error(`line ${line}: the output shown (${shown}) does not read: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

function incomplete(shown: string): boolean {
  try {
    expectation(shown.trim());
    return false;
  } catch (error) {
    return error instanceof EndOfPattern;
  }
}

class EndOfPattern extends Error {}

/** Reads the text after an arrow: status, then a JSON pattern or a line of text, then words for the reader. */
export function expectation(shown: string): Expectation {
  const result: Expectation = { shown };
  let rest = shown;
  const status = /^([1-5]\d\d)(?=$|[\s:])/.exec(rest);
  if (status) {
    result.status = Number(status[1]);
    rest = rest.slice(status[0].length).trimStart();
  }
  if (/^[[{"\d-]/.test(rest)) {
    result.json = parsePattern(rest, 0)[0];
    return result;
  }
  // Words for the reader start the rest, or follow the text shown.
  const text = /^(:|\(|…|—)/.test(rest) ? '' : (rest.split(/: | \(| — | …/)[0] ?? '').trim();
  if (text) result.text = text;
  return result;
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i] as string)) i++;
  return i;
}

function parsePattern(s: string, at: number): [Pattern, number] {
  let i = skipSpace(s, at);
  if (i >= s.length) throw new EndOfPattern('the shown JSON ends early');
  const c = s[i];
  if (s.startsWith(ELLIPSIS, i)) return [{ kind: 'any' }, i + ELLIPSIS.length];
  if (c === '"') {
    const end = stringEnd(s, i);
    const value = JSON.parse(s.slice(i, end)) as string;
    if (value === ELLIPSIS) return [{ kind: 'any' }, end];
    if (value.includes(ELLIPSIS)) {
      const parts = value.split(ELLIPSIS).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      return [{ kind: 'text', regex: new RegExp(`^${parts.join('.*')}$`, 's') }, end];
    }
    return [{ kind: 'value', value }, end];
  }
  if (c === '{' || c === '[') {
    const close = c === '{' ? '}' : ']';
    const members: Array<[string, Pattern]> = [];
    const items: Array<Pattern | 'rest'> = [];
    let open = false;
    i = skipSpace(s, i + 1);
    if (s[i] === close) i++;
    else
      for (;;) {
        i = skipSpace(s, i);
        if (i >= s.length) throw new EndOfPattern('the shown JSON ends early');
        const restHere = s.startsWith(ELLIPSIS, i) && /^\s*[,}\]]/.test(s.slice(i + ELLIPSIS.length));
        if (restHere) {
          i += ELLIPSIS.length;
          if (c === '{') open = true;
          else items.push('rest');
        } else if (c === '{') {
          if (s[i] !== '"') throw new Error(`a member name is expected at "${s.slice(i, i + 20)}"`);
          const end = stringEnd(s, i);
          const name = JSON.parse(s.slice(i, end)) as string;
          i = skipSpace(s, end);
          if (s[i] !== ':') throw new Error(`":" is expected after "${name}"`);
          const [value, next] = parsePattern(s, i + 1);
          members.push([name, value]);
          i = next;
        } else {
          const [value, next] = parsePattern(s, i);
          items.push(value);
          i = next;
        }
        i = skipSpace(s, i);
        if (i >= s.length) throw new EndOfPattern('the shown JSON ends early');
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] !== close) throw new Error(`"," or "${close}" is expected at "${s.slice(i, i + 20)}"`);
        i++;
        break;
      }
    return [c === '{' ? { kind: 'object', members, open } : { kind: 'array', items }, i];
  }
  const literal = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(s.slice(i));
  if (!literal) throw new Error(`a JSON value is expected at "${s.slice(i, i + 20)}"`);
  return [{ kind: 'value', value: JSON.parse(literal[0]) as number | boolean | null }, i + literal[0].length];
}

function stringEnd(s: string, start: number): number {
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i + 1;
  }
  throw new EndOfPattern('a string in the shown JSON does not end');
}

/** Where `actual` differs from the pattern (a JSON path and what was found), or undefined when it matches. */
export function mismatch(pattern: Pattern, actual: unknown, where = '$'): string | undefined {
  const found = `${where} is ${JSON.stringify(actual)?.slice(0, 200)}`;
  switch (pattern.kind) {
    case 'any':
      return undefined;
    case 'value':
      return actual === pattern.value ? undefined : `${found}, not ${JSON.stringify(pattern.value)}`;
    case 'text':
      return typeof actual === 'string' && pattern.regex.test(actual) ? undefined : `${found}, not like ${pattern.regex.source}`;
    case 'object': {
      if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return `${found}, not an object`;
      const record = actual as Record<string, unknown>;
      for (const [name, value] of pattern.members) {
        if (!(name in record)) return `${where}.${name} is missing`;
        const inner = mismatch(value, record[name], `${where}.${name}`);
        if (inner) return inner;
      }
      const extra = Object.keys(record).filter((name) => !pattern.members.some(([shown]) => shown === name));
      return pattern.open || extra.length === 0 ? undefined : `${where} has ${extra.join(', ')} besides the fields shown`;
    }
    case 'array':
      if (!Array.isArray(actual)) return `${found}, not an array`;
      return matchItems(pattern.items, actual, 0, 0, where) ? undefined : `${found}, not like the array shown`;
  }
}

function matchItems(items: Array<Pattern | 'rest'>, actual: unknown[], p: number, a: number, where: string): boolean {
  if (p === items.length) return a === actual.length;
  const item = items[p] as Pattern | 'rest';
  if (item === 'rest') {
    for (let skip = a; skip <= actual.length; skip++) if (matchItems(items, actual, p + 1, skip, where)) return true;
    return false;
  }
  return a < actual.length && mismatch(item, actual[a], `${where}[${a}]`) === undefined && matchItems(items, actual, p + 1, a + 1, where);
}

/** What is wrong with a command's run against the output its page shows, or undefined when nothing is. */
export function checkRun(expect: Expectation, run: { status?: number; stdout: string }): string | undefined {
  if (expect.status !== undefined && run.status !== expect.status) {
    return `status ${run.status ?? '(no HTTP call)'}, the page shows ${expect.status}`;
  }
  const printed = run.stdout.trim();
  if (expect.json) {
    let actual: unknown;
    try {
      actual = JSON.parse(printed);
    } catch {
      return `printed ${JSON.stringify(printed.slice(0, 200))}, not JSON`;
    }
    return mismatch(expect.json, actual);
  }
  if (expect.text !== undefined && printed !== expect.text)
    return `printed ${JSON.stringify(printed.slice(0, 200))}, not ${JSON.stringify(expect.text)}`;
  return undefined;
}
