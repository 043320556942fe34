// The account's own pages under its name in the top bar: Profile, Security, Your data, and Log out. A
// disclosure button: opens on click, closes on Escape, on a choice or on a click elsewhere.
import { useEffect, useRef, useState } from 'preact/hooks';
import { href } from '../router';
import { endSession } from '../session';

export function AccountMenu({ owner, name }: { owner: boolean; name: string }) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const away = (event: Event) => ref.current?.contains(event.target as Node) || setOpen(false);
    addEventListener('click', away);
    return () => removeEventListener('click', away);
  }, [open]);
  const pages: [string, string][] = [
    ...(owner ? ([['profile', 'Profile']] as [string, string][]) : []),
    ['security', 'Security'],
    ...(owner ? ([['your-data', 'Your data']] as [string, string][]) : []),
  ];
  return (
    <div class="account" ref={ref} onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
      <button
        type="button"
        class="secondary account-button"
        aria-expanded={open}
        aria-controls="account-menu"
        onClick={() => setOpen(!open)}
      >
        <span class="avatar" aria-hidden="true">
          {name.slice(0, 1).toUpperCase()}
        </span>
        <span class="account-name">{name}</span>
        <span class="visually-hidden">: your account</span>
      </button>
      {open ? (
        <div id="account-menu" class="account-menu">
          <ul>
            {pages.map(([id, label]) => (
              <li key={id}>
                <a href={href(id)} onClick={() => setOpen(false)}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
          <button type="button" class="secondary" onClick={() => endSession()}>
            Log out
          </button>
        </div>
      ) : null}
    </div>
  );
}
