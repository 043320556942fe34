// Instance names (a DNS label, CONTRACT §1): another one to offer when the one asked for is taken.
const LABEL = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;

const slug = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

/** "alice" taken, full name "Alice Example" → "alice-example"; else the name with a number: "alice2", "alice3"… */
export function suggestName(taken: string, fullName: string): string {
  const words = slug(fullName).split('-').filter(Boolean);
  const last = words[words.length - 1];
  const fromName = last && !taken.includes(last) ? `${taken}-${last}` : undefined;
  if (fromName && LABEL.test(fromName)) return fromName;
  const [, stem = taken, number] = /^(.*?)(\d*)$/.exec(taken) ?? [];
  return `${stem.slice(0, 60)}${number ? Number(number) + 1 : 2}`;
}

export const validName = (name: string) => LABEL.test(name);
