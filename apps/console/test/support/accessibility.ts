// axe-core's WCAG 2 A/AA rules on a screen. The script is run through the DevTools protocol
// (page.evaluate), which the page's Content-Security-Policy does not govern, so the CSP stays as served.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: { id: string; help: string; nodes: { target: string[] }[] }[];
}

export async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(`${AXE}\nundefined`);
  const result = await page.evaluate(() =>
    (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResult> } }).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    }),
  );
  return result.violations.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
