// parseJson refuses what PostgreSQL cannot store (NUL, a lone surrogate) wherever the JSON text puts it,
// and walks the parsed value only when the text could hold one: these are the texts that could.
import { ApiError } from '../src/errors';
import { parseJson } from '../src/body';

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
});
