// Sign-up: a new instance with its own RSA key pair (sealed under the master key) and owner account.
import { z } from 'zod';
import type { InstanceRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { type Logger } from '@pds/runtime';
import { jobIds } from '@pds/queue';
import { generateRsaKeyPair, sealPrivateKey, hashPassword, passwordProblem } from '@pds/tokens';

export const RESERVED_USERNAMES = new Set([
  'www',
  'api',
  'dex',
  'admin',
  'root',
  'mail',
  'smtp',
  'ftp',
  'ns',
  'ns1',
  'ns2',
  'static',
  'assets',
  'cdn',
  'status',
  'support',
  'help',
  'login',
  'signup',
  'auth',
  'console',
  'dashboard',
  'system',
  'gateway',
  'worker',
]);

/** An instance name: a DNS label (CONTRACT §1). */
const LABEL = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;
export const usernameFormat = z
  .string()
  .regex(LABEL, 'must be 3 to 63 characters of a-z, 0-9 and -, starting with a letter and not ending with -');

export const signupSchema = z
  .object({
    fullName: z.string().trim().min(1, 'is required').max(256, 'must be at most 256 characters'),
    username: usernameFormat.refine((u) => !RESERVED_USERNAMES.has(u), 'is reserved'),
    email: z.email('must be an e-mail address').max(254),
    pass: z.string().max(256, 'must be at most 256 characters'),
    passRepeat: z.string().max(256),
  })
  .superRefine((v, ctx) => {
    if (v.pass !== v.passRepeat) ctx.addIssue({ code: 'custom', path: ['passRepeat'], message: 'must equal pass' });
    const problem = passwordProblem(v.pass, [v.username, v.fullName, v.email]);
    if (problem) ctx.addIssue({ code: 'custom', path: ['pass'], message: problem });
  });

export type SignupInput = z.output<typeof signupSchema>;

export interface DexRegistrationQueue {
  enqueue(payload: { address: string }, jobId: string): Promise<unknown>;
}

export class SignupService {
  constructor(
    private readonly instances: InstanceRepository,
    private readonly masterKey: Buffer,
    private readonly clusterDomain: string,
    private readonly dexRegistration: DexRegistrationQueue,
    private readonly logger: Logger,
  ) {}

  /** The instance address a sign-up sent to `host` would create, or a 400/404 if the host cannot take it. */
  addressFor(host: string, username: string): string {
    const address = `${username}.${this.clusterDomain}`;
    if (host === this.clusterDomain || host === address) return address;
    if (host.endsWith(`.${this.clusterDomain}`)) throw ApiError.badRequest(`username: must match the instance address ${host}`);
    throw ApiError.notFound(`There is no instance at ${host || 'this address'}`);
  }

  async signup(address: string, input: SignupInput) {
    // One cheap look-up before the costly part (a key pair, a password hash): a taken name answers 409,
    // and an unreachable database 503, at once. The insert below still decides a race.
    if (await this.instances.findByAddress(address)) throw taken(address);
    // The spec: an address is not silently re-used, so a closed instance's name stays refused.
    if (await this.instances.isRetired(address))
      throw ApiError.conflict(`The address ${address} belonged to an instance that was closed; it cannot be used again`);
    const [keys, passwordHash] = await Promise.all([generateRsaKeyPair(), hashPassword(input.pass)]);
    const created = await this.instances.createWithOwner({
      address,
      publicKeyPem: keys.publicKeyPem,
      privateKeyEnc: sealPrivateKey(keys.privateKeyPem, this.masterKey),
      keyId: keys.keyId,
      owner: { username: input.username, email: input.email, fullName: input.fullName, passwordHash },
    });
    if (!created) throw taken(address);
    // The instance exists either way; a queue outage leaves it pending and the worker's reconciler retries it.
    await this.dexRegistration.enqueue({ address }, jobIds.registration(address)).catch((err: unknown) => {
      this.logger.error({ err, address }, 'could not enqueue dex registration');
    });
    return created;
  }

  /**
   * Whether `username` may still be signed up for, and up to three free names to offer instead (from the
   * person's last name, then numbers). Tells no more than a sign-up's 409 would.
   */
  async availability(username: string, fullName = ''): Promise<{ available: boolean; suggestions: string[] }> {
    const candidates = [username, ...alternativeNames(username, fullName)].filter((name) => !RESERVED_USERNAMES.has(name));
    const taken = new Set(await this.instances.takenAddresses(candidates.map((name) => `${name}.${this.clusterDomain}`)));
    const free = candidates.filter((name) => !taken.has(`${name}.${this.clusterDomain}`));
    const available = free[0] === username;
    return { available, suggestions: available ? [] : free.slice(0, 3) };
  }

  /**
   * Creates an instance for the operator, outside public sign-up (so reserved names such as `admin`
   * are allowed); does nothing when it exists. Its address and whether it was created.
   */
  async provision(owner: Omit<SignupInput, 'passRepeat'>): Promise<{ address: string; created: boolean }> {
    const address = `${owner.username}.${this.clusterDomain}`;
    if (await this.instances.findByAddress(address)) return { address, created: false };
    await this.signup(address, { ...owner, passRepeat: owner.pass });
    return { address, created: true };
  }
}

function taken(address: string): ApiError {
  return ApiError.conflict(`The instance ${address} already exists`);
}

/** Names to offer when one is taken: "alice" and "Alice Example" → alice-example, alice2 … alice9 (each a valid label). */
export function alternativeNames(taken: string, fullName: string): string[] {
  const words = fullName
    .normalize('NFD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  const last = words[words.length - 1];
  const [, stem = taken, number] = /^(.*?)(\d*)$/.exec(taken) ?? [];
  const first = number ? Number(number) + 1 : 2;
  const numbered = Array.from({ length: 8 }, (_, i) => `${stem.slice(0, 60)}${first + i}`);
  const fromName = last && !taken.includes(last) ? [`${taken}-${last}`] : [];
  return [...fromName, ...numbered].filter((name) => LABEL.test(name));
}
