// The security headers every answer carries (routing/envelope.ts chooses the set by the body): an API
// answer's, and helmet's for everything else.
import helmet from 'helmet';

/**
 * The security headers of an API answer (JSON, a redirect, no body), as OWASP's REST Security Cheat
 * Sheet lists them: should a browser ever show one as a document, nothing loads in it, no page frames
 * it, its type is not sniffed; and another origin cannot embed it (CORP), nor learn through a redirect
 * the address that asked (Referrer-Policy). helmet's other defaults govern documents (the opener, the
 * agent cluster, DNS prefetching, IE's download prompt, Flash's and PDF's policies, the XSS auditor);
 * on an answer that is data they do nothing but make its head 400 bytes longer.
 */
export const API_SECURITY_HEADERS: [string, string][] = [
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
];

/**
 * helmet's default headers, for pages and any other body a browser may show as a document: with its
 * defaults, helmet sets the same headers on every response, so they are computed once.
 */
export function helmetHeaders(): [string, string][] {
  const set: [string, string][] = [];
  const recorder = { setHeader: (name: string, value: unknown) => set.push([name, String(value)]), removeHeader: () => undefined };
  let ran = false;
  helmet()({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error;
    ran = true;
  });
  if (!ran) throw new Error("helmet's default headers must not wait for anything");
  return set;
}
