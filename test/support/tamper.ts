/**
 * Changes one character `fromEnd` places before the end of a signature-bearing string. Not the last
 * character: in base64url its low bits can be padding, so a change there may decode to the same bytes.
 */
export function tamperAt(text: string, fromEnd = 5): string {
  const at = text.length - fromEnd;
  return text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
}
