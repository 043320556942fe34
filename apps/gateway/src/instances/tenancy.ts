/** The instance address a Host header names (`Alice.pds.example.:8080` → `alice.pds.example`). */
export function addressOfHost(host: string): string {
  // An IPv6 literal ([::1]:8080) has colons of its own: the port follows its closing bracket.
  const port = host.indexOf(':', host.startsWith('[') ? host.indexOf(']') : 0);
  return (port === -1 ? host : host.slice(0, port)).toLowerCase().replace(/\.$/, '');
}
