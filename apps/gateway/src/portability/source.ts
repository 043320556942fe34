// The instance as an export archive's parts (writer.ts): read from the database a page at a time in key
// order, ids turned into usernames, each file's bytes opened only when the writer reaches it. Memory holds
// the accounts (id → username) and one page.
import { NO_LINK_BEFORE, type PortabilityRepository, type RecordCursor } from '@pds/db';
import { objectKey, type BlobStore } from '@pds/storage';
import type {
  ExportActivity,
  ExportApp,
  ExportBundle,
  ExportCombinator,
  ExportDebit,
  ExportLink,
  ExportRecord,
  ExportUser,
} from './format';
import type { ExportSource, FileToExport } from './writer';

const PAGE = 500;
const iso = (value: Date | string) => new Date(value).toISOString();
/** The optional fields of the format are absent, never null. */
const given = <T>(value: T | null | undefined): T | undefined => value ?? undefined;

export async function instanceSource(
  repository: PortabilityRepository,
  store: Pick<BlobStore, 'read'>,
  instance: { id: string; address: string },
  createdAt: Date,
): Promise<ExportSource> {
  const users = await repository.users(instance.id);
  const usernames = new Map(users.map((user) => [user.id, user.username]));
  const name = (id: string | null) => (id === null ? undefined : usernames.get(id));

  const exportUsers: ExportUser[] = users.map((user) => ({
    username: user.username,
    email: given(user.email),
    fullName: given(user.fullName),
    kind: user.kind,
    state: user.disabled ? 'disabled' : 'active',
    createdAt: iso(user.createdAt),
    ...(user.grants?.length ? { grants: user.grants } : {}),
  }));

  async function* apps(): AsyncGenerator<ExportApp> {
    for (const app of await repository.apps(instance.id)) {
      yield {
        appId: app.appId,
        record: app.record,
        version: app.version,
        setup: app.setup,
        enabled: app.enabled,
        setupVersion: given(app.setupVersion),
        account: name(app.userId),
      };
    }
  }

  async function* bundles(): AsyncGenerator<ExportBundle> {
    for (const bundle of await repository.bundles(instance.id))
      yield { name: bundle.name, query: bundle.query, createdAt: iso(bundle.createdAt) };
  }

  async function* combinators(): AsyncGenerator<ExportCombinator> {
    for (const combinator of await repository.combinators(instance.id)) {
      yield { name: combinator.name, query: combinator.query, createdAt: iso(combinator.createdAt) };
    }
  }

  async function* debits(): AsyncGenerator<ExportDebit> {
    for (const debit of await repository.debits(instance.id)) {
      yield {
        key: debit.key,
        requestClientName: debit.requestClientName,
        requestClientUrl: debit.requestClientUrl,
        requestClientLogoUrl: debit.requestClientLogoUrl,
        requestApplicationId: given(debit.requestApplicationId),
        requestDescription: given(debit.requestDescription),
        holder: name(debit.holderId),
        createdAt: iso(debit.createdAt),
        permissions: debit.permissions.map((terms) => ({
          createdAt: iso(terms.createdAt),
          purpose: terms.purpose,
          start: iso(terms.start),
          period: terms.period,
          cancelAtPeriodEnd: terms.cancelAtPeriodEnd,
          termsUrl: terms.termsUrl,
          bundleName: terms.bundleName,
          accepted: terms.accepted,
          canceledAt: terms.canceledAt === null ? undefined : iso(terms.canceledAt),
        })),
      };
    }
  }

  async function* files(): AsyncGenerator<FileToExport> {
    for (let after = ''; ;) {
      const page = await repository.filesPage(instance.id, after, PAGE);
      for (const file of page) {
        yield {
          file: {
            fileId: file.fileId,
            name: file.name,
            source: file.source,
            tags: file.tags,
            title: given(file.title),
            description: given(file.description),
            dateCreated: iso(file.dateCreated),
            lastUpdated: iso(file.lastUpdated),
            status: file.status,
            contentPublic: file.contentPublic,
            uploader: name(file.uploaderId),
            permissions: file.permissions.flatMap((p) => {
              const username = usernames.get(p.userId);
              return username ? [{ username, contentReadable: p.contentReadable }] : [];
            }),
          },
          content: file.status === 'Completed' ? async () => store.read(objectKey(instance.address, file.fileId)) : undefined,
        };
      }
      if (page.length < PAGE) return;
      after = (page[page.length - 1] as { fileId: string }).fileId;
    }
  }

  // Without their secrets: the rows hold no token and no password, only whether there is one.
  async function* links(): AsyncGenerator<ExportLink> {
    for (let after = NO_LINK_BEFORE; ;) {
      const page = await repository.linksPage(instance.id, after, PAGE);
      for (const link of page) {
        yield {
          id: link.id,
          fileIds: link.fileIds,
          hasPassword: link.hasPassword,
          expiresAt: link.expiresAt === null ? undefined : iso(link.expiresAt),
          downloadLimit: given(link.downloadLimit),
          downloads: link.downloads,
          views: link.views,
          lastUsedAt: link.lastUsedAt === null ? undefined : iso(link.lastUsedAt),
          allowDownload: link.allowDownload,
          createdAt: iso(link.createdAt),
          revokedAt: link.revokedAt === null ? undefined : iso(link.revokedAt),
        };
      }
      if (page.length < PAGE) return;
      after = (page[page.length - 1] as { id: string }).id;
    }
  }

  async function* records(): AsyncGenerator<ExportRecord> {
    for (let after: RecordCursor | null = null; ;) {
      const page = await repository.recordsPage(instance.id, after, PAGE);
      for (const record of page) {
        yield {
          namespace: record.namespace,
          endpoint: record.endpoint,
          recordId: record.recordId,
          data: record.data,
          links: record.links,
          createdAt: iso(record.createdAt),
          writer: name(record.userId),
        };
      }
      if (page.length < PAGE) return;
      const last = page[page.length - 1] as RecordCursor;
      after = { namespace: last.namespace, endpoint: last.endpoint, seq: last.seq };
    }
  }

  // The changes, then the reads, each in the order they were kept. Addresses are the owner's to see (as
  // in GET /api/v2.6/activity); objects hold ids and names, never a token.
  async function* activity(): AsyncGenerator<ExportActivity> {
    for (const kind of ['change', 'read'] as const) {
      for (let after = '-1'; ;) {
        const page = await repository.activityPage(instance.id, kind, after, PAGE);
        for (const entry of page) {
          yield {
            kind,
            type: entry.type,
            actor: { kind: entry.actorKind, username: name(entry.actorId) },
            object: entry.object,
            address: given(entry.address),
            time: iso(entry.at),
            times: entry.times,
          };
        }
        if (page.length < PAGE) break;
        after = (page[page.length - 1] as { key: string }).key;
      }
    }
  }

  return {
    instance: instance.address,
    createdAt,
    users: (async function* () {
      yield* exportUsers;
    })(),
    apps: apps(),
    bundles: bundles(),
    combinators: combinators(),
    debits: debits(),
    files: files(),
    links: links(),
    records: records(),
    activity: activity(),
  };
}
