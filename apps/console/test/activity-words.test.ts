// The activity log in sentences: names in place of ids, one line for the same thing done again on a
// day, and validation messages without the API's field names.
import { activityLines, sentence, type ActivityEntry } from '../src/activity/words';
import { plainMessage } from '../src/api';

const APP = { kind: 'application', id: 'app-id', name: 'Notes' };

function entry(change: Partial<ActivityEntry>): ActivityEntry {
  return {
    kind: 'read',
    type: 'records.read',
    actor: APP,
    object: {},
    names: {},
    address: '203.0.113.9',
    times: 1,
    time: '2026-11-28T10:39:37.000Z',
    ...change,
  };
}

describe('activity in sentences', () => {
  it('words each kind of entry with the names the server found', () => {
    const cases: [Partial<ActivityEntry>, string][] = [
      [{ object: { namespace: 'diary', endpoint: 'diary', count: 120 } }, 'Notes app read 120 records of your diary'],
      [{ object: { namespace: 'fitness', endpoint: 'steps', count: 1 } }, 'Notes app read 1 record of your fitness (steps)'],
      [
        {
          type: 'file.content',
          actor: { kind: 'user', id: 'b', name: 'bob' },
          object: { fileId: 'consolebackup2026.zip' },
          names: { 'consolebackup2026.zip': 'backup 2026.zip' },
        },
        'bob opened backup 2026.zip',
      ],
      [
        {
          kind: 'change',
          type: 'file.shared',
          actor: { kind: 'owner', id: 'o', name: 'alice' },
          object: { fileId: 'f', userId: 'u' },
          names: { f: 'notes.txt', u: 'bob' },
        },
        'You shared notes.txt with bob',
      ],
      [
        { kind: 'change', type: 'file.deleted', actor: { kind: 'owner', id: 'o', name: 'alice' }, object: { fileId: 'gone.txt' } },
        'You moved gone.txt to the trash',
      ],
      [
        { type: 'login.failed', actor: { kind: 'system', id: null, name: null }, object: { username: 'carol' } },
        'Someone tried to log in as carol with a wrong password',
      ],
      [
        {
          kind: 'change',
          type: 'app.setup',
          actor: { kind: 'owner', id: 'o', name: 'alice' },
          object: { appId: 'notes' },
          names: { notes: 'Notes' },
        },
        'You set up Notes',
      ],
      [
        { kind: 'change', type: 'record.created', object: { namespace: 'notes', endpoint: 'items' } },
        'Notes app added a record to your notes (items)',
      ],
      [
        {
          type: 'link.used',
          actor: { kind: 'anonymous', id: null, name: null },
          object: { linkId: 'l', action: 'downloaded', fileId: 'consoletax.pdf', name: 'tax.pdf', files: 1 },
          names: { 'consoletax.pdf': 'tax.pdf' },
        },
        'Someone with your link to tax.pdf downloaded it',
      ],
      [
        {
          type: 'link.used',
          actor: { kind: 'anonymous', id: null, name: null },
          object: { linkId: 'l', action: 'viewed', fileId: 'purged.pdf', name: 'old name.pdf', files: 3 },
        },
        'Someone with your link to old name.pdf and 2 more files viewed them',
      ],
      [
        {
          kind: 'change',
          type: 'link.created',
          actor: { kind: 'owner', id: 'o', name: 'alice' },
          object: { linkId: 'l', fileId: 'f', name: 'tax.pdf', files: 2 },
          names: { f: 'tax 2025.pdf' },
        },
        'You made a share link to tax 2025.pdf and 1 more file',
      ],
      [
        {
          kind: 'change',
          type: 'link.revoked',
          actor: { kind: 'owner', id: 'o', name: 'alice' },
          object: { linkId: 'l', fileId: 'f', name: 'tax.pdf', files: 1 },
        },
        'You revoked the share link to tax.pdf',
      ],
    ];
    for (const [change, words] of cases) expect(sentence(entry(change))).toBe(words);
  });

  it('folds the same read on one day into one line that says how often, with the records added up', () => {
    const read = (time: string, count: number) => entry({ object: { namespace: 'diary', endpoint: 'diary', count }, time });
    const lines = activityLines([
      read('2026-11-28T15:00:00.000Z', 40),
      read('2026-11-28T12:00:00.000Z', 40),
      entry({
        type: 'login',
        actor: { kind: 'user', id: 'b', name: 'bob' },
        object: { username: 'bob' },
        time: '2026-11-28T11:00:00.000Z',
      }),
      read('2026-11-28T10:00:00.000Z', 40),
      read('2026-11-20T10:00:00.000Z', 5),
    ]);
    expect(lines.map((line) => [line.sentence, line.time, line.address])).toEqual([
      ['Notes app read 120 records of your diary, 3 times', '2026-11-28T15:00:00.000Z', undefined],
      ['bob logged in', '2026-11-28T11:00:00.000Z', '203.0.113.9'],
      ['Notes app read 5 records of your diary', '2026-11-20T10:00:00.000Z', undefined],
    ]);
  });

  it('says what was wrong with a field in people’s words, not the API’s', () => {
    expect(plainMessage('password: must be 8 to 256 characters')).toBe('The password must be 8 to 256 characters.');
    expect(plainMessage('newPassword: must be 8 to 256 characters; email: must be an e-mail address.')).toBe(
      'The new password must be 8 to 256 characters. The e-mail address must be an e-mail address.',
    );
    expect(plainMessage('newPassword must be 8 to 256 characters')).toBe('The new password must be 8 to 256 characters.');
    expect(plainMessage('File consolex.txt not found')).toBe('File consolex.txt not found');
  });
});
