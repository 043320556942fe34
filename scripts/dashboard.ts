// `pnpm dashboard`: writes infra/grafana/pds.json, the Grafana dashboard (infra/grafana/dashboard.ts), from
// its typed source; test/infra/monitoring.test.ts fails when the committed file is not current.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { dashboard } from '../infra/grafana/dashboard';

export const DASHBOARD_FILE = path.resolve(__dirname, '../infra/grafana/pds.json');

export const serialiseDashboard = () => `${JSON.stringify(dashboard, null, 2)}\n`;

if (require.main === module) {
  writeFileSync(DASHBOARD_FILE, serialiseDashboard());
  console.log(`wrote ${DASHBOARD_FILE}`);
}
