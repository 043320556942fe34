// A staff console served from the web console's Vite build (apps/console/dist) by a listener of its own:
// the operator's (operator.html, on the gateway's admin listener) and dex's administrators' (dex.html, on
// dex). Its page and its hashed assets, both under the console's strict Content-Security-Policy.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import express, { type RequestHandler } from 'express';
import { consoleCsp } from './console-csp';
import type { Reply } from './routing/route';

export interface StaffConsole {
  /** The page (read per request, a small file: a rebuilt console is served without a restart). */
  page(): Promise<Reply>;
  /** Serves `/assets/…`: mount it at `/assets`. */
  assets: RequestHandler;
}

/** The console page `page` of the build in `dist`; undefined when the console is not built (`pnpm build`). */
export function staffConsole(dist: string | undefined, page: string): StaffConsole | undefined {
  if (!dist || !existsSync(path.join(dist, page))) return undefined;
  const csp = consoleCsp({});
  const files = express.static(path.join(dist, 'assets'), { index: false, immutable: true, maxAge: '1y' });
  return {
    page: async () => ({
      status: 200,
      headers: { 'Content-Security-Policy': csp, 'Cache-Control': 'no-cache' },
      text: { type: 'text/html; charset=utf-8', body: await readFile(path.join(dist, page), 'utf8') },
    }),
    assets: (req, res, next) => {
      res.setHeader('Content-Security-Policy', csp);
      void files(req, res, next);
    },
  };
}

/** The answer for a console's page when its build is missing. */
export const CONSOLE_NOT_BUILT = { error: 'Not Found', message: 'The console is not built (pnpm build)' };
