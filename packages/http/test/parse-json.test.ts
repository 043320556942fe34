// parseJson refuses what PostgreSQL cannot store (NUL, a lone surrogate) wherever the JSON text puts it,
// and walks the parsed value only when the text could hold one: these are the texts that could. Its
// nesting limit counts brackets outside strings only, however the strings escape their quotes.
import { ApiError } from '../src/errors';
import { MAX_JSON_DEPTH, nestingDepth, parseJson } from '../src/body';

function refusal(text: string): string {
  try {
    parseJson(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).message;
  }
  throw new Error(`${text} was accepted`);
}

describe('parseJson', () => {
  it('refuses an escaped NUL in a value or a key, naming where', () => {
    expect(refusal('{"a":[1,"x\\u0000"]}')).toBe('body.a.1: may not contain NUL characters');
    expect(refusal('{"k\\u0000":1}')).toBe('body key: may not contain NUL characters');
  });

  it('refuses an escaped lone surrogate in either case, and a raw one', () => {
    expect(refusal('{"t":"\\uD800"}')).toBe('body.t: may not contain unpaired UTF-16 surrogates');
    expect(refusal('{"t":"\\udfff x"}')).toBe('body.t: may not contain unpaired UTF-16 surrogates');
    expect(refusal(`{"t":"${String.fromCharCode(0xd800)}"}`)).toBe('body.t: may not contain unpaired UTF-16 surrogates');
  });

  it('accepts surrogate pairs, raw or escaped, and an escaped backslash before "u0000"', () => {
    expect(parseJson('{"t":"😀","u":"\\ud83d\\ude00"}')).toEqual({ t: '😀', u: '😀' });
    expect(parseJson('{"t":"\\\\u0000"}')).toEqual({ t: '\\u0000' });
  });

  it('counts the brackets outside strings, wherever a string ends', () => {
    const deep = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);
    expect(nestingDepth(deep(3))).toBe(3);
    // Brackets inside strings, after an escaped quote and after escaped backslashes, do not count.
    expect(nestingDepth(String.raw`{"a":"[[[\\\"[[","b":"x\"[[[["}`)).toBe(1);
    // A string that ends in an escaped backslash ends there: what follows counts.
    expect(nestingDepth(`{"a":"\\\\",${'"b":'}${deep(5)}}`)).toBe(6);
    expect(nestingDepth(`["no end ${deep(9)}`)).toBe(1);
    expect(refusal(deep(MAX_JSON_DEPTH + 1))).toBe(`body: nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(parseJson(deep(MAX_JSON_DEPTH, String.raw`"]]]\\"`))).toEqual(JSON.parse(deep(MAX_JSON_DEPTH, String.raw`"]]]\\"`)));
  });
});
