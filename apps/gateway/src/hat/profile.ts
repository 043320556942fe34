// The owner's public profile, kept the way the original's clients (its web app and iOS SDK) keep it, so
// what they publish shows here and the other way round: the profile is the newest record of
// `rumpel/profile`, and which of its fields are public is the mapping of the `phata` bundle's `profile`
// property. `GET /phata/profile` evaluates that bundle for anyone, or, until the owner stores one, the
// original's default, which publishes shared notes and no profile field.
import { z } from 'zod';
import { recordJson, type DataRecordRepository } from '@pds/db';
import type { Clock } from '@pds/tokens';
import { requireOwner, type Caller } from '../context';
import type { BundleStructure } from '../data/bundle-input';
import type { BundleService } from '../data/bundles';
import type { RecordView } from '../data/service';
import type { ResolvedInstance } from '../instances/registry';

/** The profile's fields by group, as the original's clients name them. */
export const PROFILE_FIELDS = {
  photo: ['avatar'],
  personal: ['title', 'firstName', 'middleName', 'lastName', 'preferredName', 'nickName', 'birthDate', 'gender', 'ageGroup'],
  contact: ['primaryEmail', 'alternativeEmail', 'mobile', 'landline'],
  emergencyContact: ['firstName', 'lastName', 'mobile', 'relationship'],
  address: ['city', 'county', 'country'],
  about: ['title', 'body'],
  online: ['website', 'blog', 'facebook', 'twitter', 'linkedin', 'google', 'youtube'],
} as const;

type Group = keyof typeof PROFILE_FIELDS;
export type ProfileFields = { [G in Group]: { [F in (typeof PROFILE_FIELDS)[G][number]]: string } };

const NAMESPACE = 'rumpel';
const ENDPOINT = 'profile';
const BUNDLE = 'phata';

/** Every field as `group.field`: the names published fields go by. */
export const FIELD_PATHS = Object.entries(PROFILE_FIELDS).flatMap(([group, fields]) => fields.map((field) => `${group}.${field}`));

const groupSchema = (fields: readonly string[], max: number) =>
  z.object(Object.fromEntries(fields.map((field) => [field, z.string().max(max).optional()]))).strict();

export const profileSchema = z.object({
  profile: z
    .object(
      Object.fromEntries(
        Object.entries(PROFILE_FIELDS).map(([group, fields]) => [group, groupSchema(fields, group === 'about' ? 16_384 : 1024).optional()]),
      ),
    )
    .strict(),
  published: z
    .array(z.enum(FIELD_PATHS as [string, ...string[]]))
    .max(FIELD_PATHS.length)
    .describe('The fields anyone may read at /api/v2.6/phata/profile, as group.field'),
});

export type ProfileInput = z.output<typeof profileSchema>;

/** The original's default `phata` bundle: notes shared on the profile page, and of the profile only `shared`. */
const NOTABLES: BundleStructure['bundle'][string] = {
  endpoints: [
    {
      endpoint: 'rumpel/notablesv1',
      filters: [
        { field: 'shared', operator: { operator: 'contains', value: true } },
        { field: 'shared_on', operator: { operator: 'contains', value: 'phata' } },
      ],
      mapping: {
        kind: 'kind',
        shared: 'shared',
        message: 'message',
        author: 'authorv1',
        location: 'locationv1',
        shared_on: 'shared_on',
        created_time: 'created_time',
        public_until: 'public_until',
        updated_time: 'updated_time',
      },
    },
  ],
  orderBy: 'updated_time',
  ordering: 'descending',
};

const profileProperty = (mapping: Record<string, string>): BundleStructure['bundle'][string] => ({
  endpoints: [{ endpoint: `${NAMESPACE}/${ENDPOINT}`, mapping }],
  orderBy: 'dateCreated',
  ordering: 'descending',
  limit: 1,
});

const DEFAULT_BUNDLE: BundleStructure = { name: BUNDLE, bundle: { notables: NOTABLES, profile: profileProperty({ shared: 'shared' }) } };

const text = (value: unknown) => (typeof value === 'string' ? value : '');

export class ProfileService {
  constructor(
    private readonly bundles: BundleService,
    private readonly records: DataRecordRepository,
    private readonly clock: Clock,
  ) {}

  /** What anyone may read: `{notables: [...], profile: [...]}`, the original's bundle values. */
  async publicProfile(tenant: ResolvedInstance): Promise<Record<string, RecordView[]>> {
    const instanceId = tenant.instance.id;
    return this.bundles.evaluate(instanceId, (await this.bundles.stored(instanceId, BUNDLE)) ?? DEFAULT_BUNDLE);
  }

  /** The owner's profile, every field (empty when unset), and which fields are public. */
  async own(tenant: ResolvedInstance, caller: Caller): Promise<{ profile: ProfileFields; published: string[] }> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const [[newest], bundle] = await Promise.all([
      this.records.find(instanceId, NAMESPACE, ENDPOINT, { orderBy: ['dateCreated'], descending: true, skip: 0, take: 1 }),
      this.bundles.stored(instanceId, BUNDLE),
    ]);
    const data = (newest?.data ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const mapping = bundle?.bundle.profile?.endpoints[0]?.mapping ?? {};
    return {
      profile: this.complete((group, field) => text(data[group]?.[field])),
      published: FIELD_PATHS.filter((path) => path in mapping),
    };
  }

  /**
   * Stores the profile as a new `rumpel/profile` record (the original's clients read the newest) and
   * publishes the chosen fields through the `phata` bundle, keeping its notes property.
   */
  async save(tenant: ResolvedInstance, caller: Caller, input: ProfileInput): Promise<{ profile: ProfileFields; published: string[] }> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const given = input.profile as Partial<Record<Group, Record<string, string | undefined>>>;
    const profile = this.complete((group, field) => given[group]?.[field] ?? '');
    const published = FIELD_PATHS.filter((path) => input.published.includes(path));
    const record = { ...profile, shared: published.length > 0, dateCreated: Math.floor(this.clock().getTime() / 1000) };
    await this.records.insert(instanceId, caller.user.id, NAMESPACE, ENDPOINT, [recordJson(record)], caller.actor);
    const previous = await this.bundles.stored(instanceId, BUNDLE);
    const notables = previous?.bundle.notables ?? NOTABLES;
    const mapping = Object.fromEntries(published.map((path) => [path, path]));
    await this.bundles.save(instanceId, {
      name: BUNDLE,
      bundle: published.length ? { notables, profile: profileProperty(mapping) } : { notables },
    });
    return { profile, published };
  }

  private complete(value: (group: Group, field: string) => string): ProfileFields {
    return Object.fromEntries(
      Object.entries(PROFILE_FIELDS).map(([group, fields]) => [
        group,
        Object.fromEntries(fields.map((field) => [field, value(group as Group, field)])),
      ]),
    ) as ProfileFields;
  }
}
