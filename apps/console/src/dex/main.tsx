// Dex's administrators' console, served by dex: log in with an administrator's console password (or owner
// token), then the certified apps (each with its versions, an update pushed to chosen instances after a
// preview, and each instance's progress), the certified clusters with their instances and keys'
// fingerprints, and the audit of every administrator's action.
import { render } from 'preact';
import '../style.css';
import '../staff/staff.css';
import './dex.css';
import { href } from '../router';
import { Audit } from '../staff/Audit';
import { StaffShell } from '../staff/Shell';
import { dexApi } from './api';
import { AppPage, NewApp } from './AppPage';
import { Apps } from './Apps';
import { Instances } from './Instances';
import { actionName, actorName } from './words';

function App() {
  return (
    <StaffShell
      api={dexApi}
      title="Dex console"
      logIn={{
        title: 'Dex console',
        intro:
          'For dex administrators: certify apps and push their updates. Log in with your administrator instance and its console password.',
        name: { label: 'Administrator instance', key: 'address', placeholder: 'admin.pds.example' },
        token: {
          label: 'Owner token',
          key: 'token',
          use: 'Log in with an owner token instead',
          back: 'Log in with a console password instead',
        },
      }}
      screens={[
        ['apps', 'Apps'],
        ['instances', 'Clusters and instances'],
        ['audit', 'Audit'],
      ]}
      actorName={actorName}
    >
      {({ screen, rest }) =>
        screen === 'apps' && rest[0] === 'new' ? (
          <NewApp />
        ) : screen === 'apps' && rest[0] ? (
          <AppPage key={rest[0]} appId={rest[0]} />
        ) : screen === 'apps' ? (
          <Apps />
        ) : screen === 'instances' ? (
          <Instances />
        ) : screen === 'audit' ? (
          <Audit
            api={dexApi}
            path="/api/admin/audit"
            actionName={actionName}
            actorName={actorName}
            findLabel="Find by app, push or address"
            file="dex-audit.jsonl"
          />
        ) : (
          <p>
            Nothing here. <a href={href('apps')}>Go to the apps</a>.
          </p>
        )
      }
    </StaffShell>
  );
}

render(<App />, document.getElementById('root') as HTMLElement);
