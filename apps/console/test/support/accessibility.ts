// axe-core's WCAG 2 A/AA rules on a screen. The script is run through the DevTools protocol
// (page.evaluate), which the page's Content-Security-Policy does not govern, so the CSP stays as served.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: { id: string; help: string; nodes: { target: string[] }[] }[];
}

/** Every WCAG 2.1 A/AA rule, or (`contrastOnly`) the one a change of colours alone can break. */
export async function accessibilityProblems(page: Page, { contrastOnly = false } = {}): Promise<string[]> {
  // Loaded once per document: the script is half a megabyte.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${AXE}\nundefined`);
  const runOnly = contrastOnly
    ? { type: 'rule', values: ['color-contrast'] }
    : { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] };
  const result = await page.evaluate(
    (only) =>
      (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResult> } }).axe.run(document, { runOnly: only }),
    runOnly,
  );
  return result.violations.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
