// The console's navigation as people know it from their cloud drive: their files first (Files, Photos,
// Shared, Trash), then the owner's data store (Apps, Data, Users, Activity), and the storage bar at the
// foot. A column beside the screen on a wide window; a drawer opened from the top bar on a phone.
import { href } from '../router';
import { StorageBar } from '../views/files/StorageBar';

export interface NavItem {
  id: string;
  label: string;
}

export function navGroups(owner: boolean, debits: boolean): { label: string; items: NavItem[] }[] {
  const mine: NavItem[] = [
    { id: 'files', label: owner ? 'Files' : 'Shared with you' },
    { id: 'photos', label: 'Photos' },
    ...(owner
      ? [
          { id: 'shared', label: 'Shared' },
          { id: 'trash', label: 'Trash' },
        ]
      : []),
  ];
  const store: NavItem[] = [
    { id: 'apps', label: 'Apps' },
    { id: 'data', label: 'Data' },
    ...(debits ? [{ id: 'data-debits', label: 'Data debits' }] : []),
    { id: 'users', label: 'Users' },
    { id: 'activity', label: 'Activity' },
  ];
  return owner
    ? [
        { label: 'Your files', items: mine },
        { label: 'Your data store', items: store },
      ]
    : [{ label: 'Your files', items: mine }];
}

export function Sidebar({ screen, owner, debits, open }: { screen: string; owner: boolean; debits: boolean; open: boolean }) {
  return (
    <nav id="sidebar" class={open ? 'sidebar open' : 'sidebar'} aria-label="Console">
      {navGroups(owner, debits).map((group, n) => (
        <div key={group.label} class="nav-group">
          <p class="nav-heading" id={`nav-group-${n}`}>
            {group.label}
          </p>
          <ul aria-labelledby={`nav-group-${n}`}>
            {group.items.map(({ id, label }) => (
              <li key={id}>
                <a href={href(id)} aria-current={screen === id ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </div>
      ))}
      {owner ? <StorageBar /> : null}
    </nav>
  );
}
