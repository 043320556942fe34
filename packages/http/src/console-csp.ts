// The web consoles' Content-Security-Policy (the owner's on instance addresses, the operator's and dex's
// administrators'): their own scripts and styles only (nothing inline, no CDN).
// Beyond 'self' it names only origins the instance already trusts: the blob store's signed addresses
// (S3 answers those itself) and the logos of apps that dex certified and pushed to this instance.

export interface CspSources {
  /** Origin of the signed upload/download addresses when they are not the instance's own (S3). */
  blobOrigin?: string;
  /** Origins of the instance's app logos. */
  logoOrigins?: string[];
}

/** The origin of the store's signed addresses when it is not the instance's own: S3's endpoint. */
export function blobOriginOf(config: { STORAGE: string; S3_ENDPOINT?: string }): string | undefined {
  return config.STORAGE === 's3' && config.S3_ENDPOINT ? originOf(config.S3_ENDPOINT) : undefined;
}

/** Origins are quoted into a header: only well-formed http(s) origins pass. */
export function originOf(url: string): string | undefined {
  try {
    const { protocol, origin } = new URL(url);
    return protocol === 'https:' || protocol === 'http:' ? origin : undefined;
  } catch {
    return undefined;
  }
}

export function consoleCsp({ blobOrigin, logoOrigins = [] }: CspSources): string {
  const blob = blobOrigin ? ` ${blobOrigin}` : '';
  const logos = [...new Set(logoOrigins)].map((origin) => ` ${origin}`).join('');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' blob:${blob}${logos}`,
    `connect-src 'self'${blob}`,
    // Previews of PDFs are shown from a blob: address the console made from the fetched bytes.
    'frame-src blob:',
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
