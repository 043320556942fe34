// Owner only: the public profile. Every field of the profile the original's apps keep, each with a
// box that makes it public; anyone then reads the public ones at /api/v2.6/phata/profile.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { href } from '../router';
import { ScreenTitle, Status } from '../ui';

type Fields = Record<string, Record<string, string>>;

interface OwnProfile {
  profile: Fields;
  published: string[];
}

const GROUPS: Record<string, string> = {
  personal: 'About you',
  about: 'In your words',
  contact: 'Contact',
  address: 'Where you live',
  online: 'Online',
  photo: 'Photo',
  emergencyContact: 'Emergency contact',
};

const LABELS: Record<string, string> = {
  avatar: 'Picture address (URL)',
  body: 'Text',
  nickName: 'Nickname',
  linkedin: 'LinkedIn',
  youtube: 'YouTube',
};

/** `firstName` → `First name`. */
const words = (name: string) => LABELS[name] ?? name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`).replace(/^./, (c) => c.toUpperCase());

export const PUBLIC_PROFILE = '/api/v2.6/phata/profile';

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

  const groups = Object.keys(GROUPS).filter((group) => own.profile[group]);
  return (
    <section aria-labelledby="profile-title">
      <div class="screen-head">
        <ScreenTitle id="profile-title">Profile</ScreenTitle>
      </div>
      <p class="muted profile-intro">
        What you tell about yourself. Only the fields marked public can be read by anyone, at{' '}
        <a href={PUBLIC_PROFILE}>{`${location.host}${PUBLIC_PROFILE}`}</a>; the apps that show HAT profiles read them there.
      </p>
      <form class="profile" onSubmit={save}>
        {groups.map((group) => (
          <fieldset key={group} class="panel">
            <legend>{GROUPS[group]}</legend>
            {Object.entries(own.profile[group] ?? {}).map(([field, value]) => {
              const path = `${group}.${field}`;
              const id = `profile-${group}-${field}`;
              return (
                <div class="profile-field" key={path}>
                  <label for={id}>{words(field)}</label>
                  {path === 'about.body' ? (
                    <textarea id={id} rows={4} value={value} onInput={(e) => setValue(group, field, e.currentTarget.value)} />
                  ) : (
                    <input id={id} value={value} onInput={(e) => setValue(group, field, e.currentTarget.value)} />
                  )}
                  <label class="checkbox">
                    <input
                      type="checkbox"
                      checked={own.published.includes(path)}
                      onChange={(e) => setPublic(path, e.currentTarget.checked)}
                    />
                    Public <span class="visually-hidden">{words(field)}</span>
                  </label>
                </div>
              );
            })}
          </fieldset>
        ))}
        <Status {...status} />
        <button type="submit">Save profile</button>
      </form>
      <p class="muted close-link">
        Leaving? <a href={href('close')}>Close this instance and erase everything in it</a>.
      </p>
    </section>
  );
}
