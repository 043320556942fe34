// Owner only: the public profile. The few fields people fill (name, photo, about, contact) first, each
// with a box that shows it on the public profile; every other field the original's apps keep under
// "More". Anyone reads the public ones at /api/v2.6/phata/profile.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { setPublic as setFilePublic } from '../files/actions';
import { filesChanged } from '../files/changes';
import { href } from '../router';
import { ScreenTitle, Status } from '../ui';
import { uploadFile } from '../upload';

type Fields = Record<string, Record<string, string>>;

interface OwnProfile {
  profile: Fields;
  published: string[];
}

/** The fields most people fill, as group.field, with their labels. */
const MAIN: [string, string][] = [
  ['personal.firstName', 'First name'],
  ['personal.lastName', 'Last name'],
  ['about.body', 'About you'],
  ['contact.primaryEmail', 'E-mail address'],
  ['contact.mobile', 'Phone'],
  ['online.website', 'Website'],
];
const PHOTO = 'photo.avatar';

const GROUPS: Record<string, string> = {
  personal: 'About you',
  about: 'In your words',
  contact: 'Contact',
  address: 'Where you live',
  online: 'Online',
  emergencyContact: 'Emergency contact',
};

const LABELS: Record<string, string> = {
  body: 'Text',
  nickName: 'Nickname',
  linkedin: 'LinkedIn',
  youtube: 'YouTube',
};

/** `firstName` → `First name`. */
const words = (name: string) => LABELS[name] ?? name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`).replace(/^./, (c) => c.toUpperCase());

export const PUBLIC_PROFILE = '/api/v2.6/phata/profile';

/** The profile picture: one of the owner's files, made public so the apps that show profiles can load it. */
function PhotoField({ value, onValue }: { value: string; onValue: (url: string) => void }) {
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const choose = async (file: File | undefined) => {
    if (!file) return;
    setStatus({ message: 'Uploading…' });
    try {
      const uploaded = await uploadFile(file, 'profile', () => undefined);
      await setFilePublic(uploaded.fileId, true);
      filesChanged();
      onValue(`${location.origin}/api/v2.6/files/content/${encodeURIComponent(uploaded.fileId)}`);
      setStatus({ message: 'Save the profile to keep it.' });
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  // Only a picture of this data store is shown here (the page's CSP allows no other).
  const shown = value.startsWith(`${location.origin}/`);
  return (
    <div class="profile-photo">
      {shown ? <img src={value} alt="Your profile photo" width={96} height={96} /> : <span class="avatar large" aria-hidden="true" />}
      <div>
        <label class="button secondary">
          {value ? 'Choose another photo' : 'Choose a photo'}
          <input class="visually-hidden" type="file" accept="image/*" onChange={(e) => void choose(e.currentTarget.files?.[0])} />
        </label>
        {value ? (
          <button type="button" class="link" onClick={() => onValue('')}>
            Remove the photo
          </button>
        ) : null}
        <Status {...status} />
      </div>
    </div>
  );
}

export function Profile() {
  const [own, setOwn] = useState<OwnProfile>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  useEffect(() => void call<OwnProfile>('/api/v2.6/profile').then(setOwn, (e: unknown) => setStatus({ error: errorText(e) })), []);
  if (!own) return <Status {...status} />;

  const setValue = (group: string, field: string, value: string) =>
    setOwn({ ...own, profile: { ...own.profile, [group]: { ...own.profile[group], [field]: value } } });
  const setPublic = (path: string, shown: boolean) =>
    setOwn({ ...own, published: shown ? [...own.published, path] : own.published.filter((p) => p !== path) });

  const save = async (event: Event) => {
    event.preventDefault();
    try {
      setOwn(await call<OwnProfile>('/api/v2.6/profile', { method: 'PUT', body: own }));
      const count = own.published.length;
      setStatus({
        message: count ? `Saved. ${count === 1 ? 'One field is' : `${count} fields are`} public.` : 'Saved. Nothing is public.',
      });
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  const value = (path: string) => {
    const [group = '', field = ''] = path.split('.');
    return own.profile[group]?.[field] ?? '';
  };
  const setPath = (path: string, text: string) => {
    const [group = '', field = ''] = path.split('.');
    setValue(group, field, text);
  };
  const publicBox = (path: string, label: string) => (
    <label class="checkbox">
      <input type="checkbox" checked={own.published.includes(path)} onChange={(e) => setPublic(path, e.currentTarget.checked)} />
      Public <span class="visually-hidden">{label}</span>
    </label>
  );
  const main = new Set([...MAIN.map(([path]) => path), PHOTO]);
  const groups = Object.keys(GROUPS).filter((group) => own.profile[group]);
  return (
    <section aria-labelledby="profile-title">
      <div class="screen-head">
        <ScreenTitle id="profile-title">Profile</ScreenTitle>
      </div>
      <p class="muted profile-intro">
        What you tell about yourself. Only what you mark public can be seen by anyone, at{' '}
        <a href={PUBLIC_PROFILE}>{`${location.host}${PUBLIC_PROFILE}`}</a>, where apps that show profiles read it.
      </p>
      <form class="profile" onSubmit={save}>
        <fieldset class="panel">
          <legend>Photo</legend>
          <div class="profile-field profile-photo-row">
            <PhotoField value={value(PHOTO)} onValue={(url) => setPath(PHOTO, url)} />
            {publicBox(PHOTO, 'Photo')}
          </div>
        </fieldset>
        <fieldset class="panel">
          <legend>About you</legend>
          {MAIN.map(([path, label]) => {
            const id = `profile-${path.replace('.', '-')}`;
            return (
              <div class="profile-field" key={path}>
                <label for={id}>{label}</label>
                {path === 'about.body' ? (
                  <textarea id={id} rows={4} value={value(path)} onInput={(e) => setPath(path, e.currentTarget.value)} />
                ) : (
                  <input
                    id={id}
                    type={(path.endsWith('Email') ? 'email' : path.endsWith('mobile') ? 'tel' : 'text') as 'text'}
                    value={value(path)}
                    onInput={(e) => setPath(path, e.currentTarget.value)}
                  />
                )}
                {publicBox(path, label)}
              </div>
            );
          })}
        </fieldset>
        <details class="panel more">
          <summary>More: address, other names, links, emergency contact</summary>
          {groups.map((group) => {
            const fields = Object.entries(own.profile[group] ?? {}).filter(([field]) => !main.has(`${group}.${field}`));
            if (fields.length === 0) return null;
            return (
              <fieldset key={group}>
                <legend>{GROUPS[group]}</legend>
                {fields.map(([field, text]) => {
                  const path = `${group}.${field}`;
                  const id = `profile-${group}-${field}`;
                  return (
                    <div class="profile-field" key={path}>
                      <label for={id}>{words(field)}</label>
                      <input id={id} value={text} onInput={(e) => setValue(group, field, e.currentTarget.value)} />
                      {publicBox(path, `${GROUPS[group]}: ${words(field)}`)}
                    </div>
                  );
                })}
              </fieldset>
            );
          })}
        </details>
        <Status {...status} />
        <button type="submit">Save profile</button>
      </form>
      <p class="muted close-link">
        Leaving? <a href={href('close')}>Close this instance and erase everything in it</a>.
      </p>
    </section>
  );
}
