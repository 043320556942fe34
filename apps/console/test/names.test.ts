// The name offered on the sign-up page when the one asked for is taken: a valid instance name.
import { suggestName, validName } from '../src/names';

describe('suggestName', () => {
  it.each([
    ['alice', 'Alice Example', 'alice-example'],
    ['alice', 'Zoë Ångström', 'alice-angstrom'],
    ['alice', 'Alice', 'alice2'],
    ['alice', '', 'alice2'],
    ['bob7', 'Bob', 'bob8'],
    ['bob7', '!!!', 'bob8'],
  ])('offers for %s (%s) the name %s', (taken, fullName, offered) => {
    expect(suggestName(taken, fullName)).toBe(offered);
    expect(validName(offered)).toBe(true);
  });

  it('keeps within the 63 characters of a DNS label', () => {
    const long = `a${'b'.repeat(62)}`;
    const offered = suggestName(long, 'Someone Withaverylongname');
    expect(offered.length).toBeLessThanOrEqual(63);
    expect(validName(offered)).toBe(true);
  });
});
