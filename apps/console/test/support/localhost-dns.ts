// Browsers resolve *.localhost to loopback by themselves; Node asks the system resolver, which does
// not. The test process (playing the third-party app's server) gets the browsers' rule, so hat-js
// reaches http://<name>.pds.localhost as a browser would.
import dns from 'node:dns';

type Callback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

export function resolveLocalhostSubdomains(): () => void {
  const original = dns.lookup;
  const patched = (hostname: string, options: unknown, callback?: Callback) => {
    const done = (typeof options === 'function' ? options : callback) as Callback;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
    if (!hostname.endsWith('.localhost')) return (original as (...args: unknown[]) => void)(hostname, options, callback);
    process.nextTick(() => (all ? done(null, [{ address: '127.0.0.1', family: 4 }]) : done(null, '127.0.0.1', 4)));
  };
  (dns as { lookup: unknown }).lookup = patched;
  return () => {
    (dns as { lookup: unknown }).lookup = original;
  };
}
