// The operator's console, served by the gateway's admin listener (ADMIN_PORT) only: log in with an
// operator account or ADMIN_TOKEN, then the instances (search, sort, one instance's page and its actions),
// the cluster (processes, queues and failed jobs, storage, dex registrations) and the audit.
import { render } from 'preact';
import '../style.css';
import '../staff/staff.css';
import { href } from '../router';
import { Audit } from '../staff/Audit';
import { StaffShell } from '../staff/Shell';
import { operatorApi } from './api';
import { Cluster } from './Cluster';
import { InstancePage } from './InstancePage';
import { Instances } from './Instances';

/** "instance.suspend" → "Suspend". */
const ACTIONS: Record<string, string> = {
  'instance.suspend': 'Suspend',
  'instance.resume': 'Resume',
  'instance.quota': 'Set quota',
  'instance.close': 'Close',
  'job.retry': 'Retry job',
  'usage.verify': 'Verify usage',
  'session.create': 'Log in',
  'session.end': 'Log out',
  'operator.add': 'Add operator',
  'operator.remove': 'Remove operator',
};

const actorName = (actor: string) => actor.replace(/^operator:/, '');

function App() {
  return (
    <StaffShell
      api={operatorApi}
      title="Operator console"
      logIn={{
        title: 'Operator console',
        intro: 'For the people who run this cluster. Log in with your operator account.',
        name: { label: 'Name', key: 'name' },
        token: {
          label: 'Admin token',
          key: 'adminToken',
          use: 'Log in with the admin token instead',
          back: 'Log in with an operator account instead',
        },
      }}
      screens={[
        ['instances', 'Instances'],
        ['cluster', 'Cluster'],
        ['audit', 'Audit'],
      ]}
      actorName={actorName}
    >
      {({ screen, rest, query }) =>
        screen === 'instances' && rest[0] ? (
          <InstancePage key={rest[0]} address={rest[0]} />
        ) : screen === 'instances' ? (
          <Instances query={query} />
        ) : screen === 'cluster' ? (
          <Cluster />
        ) : screen === 'audit' ? (
          <Audit
            api={operatorApi}
            path="/audit"
            actionName={(entry) => ACTIONS[entry.action] ?? entry.action}
            actorName={actorName}
            findLabel="Find by instance or name"
            file="audit.jsonl"
          />
        ) : (
          <p>
            Nothing here. <a href={href('instances')}>Go to the instances</a>.
          </p>
        )
      }
    </StaffShell>
  );
}

render(<App />, document.getElementById('root') as HTMLElement);
