// Data debits as the original system's clients (hat-js) read them: each set of terms with whether it
// is accepted and active now, and the debit's active and latest terms.
import type { DebitPermission, DebitWithPermissions } from '@pds/db';

export interface PermissionView {
  dateCreated: string;
  purpose: string;
  start: string;
  period: number;
  cancelAtPeriodEnd: boolean;
  termsUrl: string;
  bundle: { name: string; bundle: unknown };
  canceledAt?: string;
  accepted: boolean;
  active: boolean;
  end?: string;
}

/** The original's DataDebit, as hat-js reads it. */
export interface DebitView {
  dataDebitKey: string;
  dateCreated: string;
  permissions: PermissionView[];
  requestClientName: string;
  requestClientUrl: string;
  requestClientLogoUrl: string;
  requestApplicationId?: string;
  requestDescription?: string;
  accepted: boolean;
  active: boolean;
  start?: string;
  end?: string;
  permissionsActive?: PermissionView;
  permissionsLatest?: PermissionView;
}

/**
 * When terms end: when cancelled; or, for terms that cancel at period end, at the end of the period
 * running when they were cancelled (the first period when set from the start). Otherwise they roll on.
 */
export function endOf(permission: Pick<DebitPermission, 'start' | 'period' | 'cancelAtPeriodEnd' | 'canceledAt'>): Date | undefined {
  if (!permission.cancelAtPeriodEnd) return permission.canceledAt ?? undefined;
  const periodMs = permission.period * 1000;
  const since = (permission.canceledAt ?? permission.start).getTime() - permission.start.getTime();
  return new Date(permission.start.getTime() + periodMs * Math.max(1, Math.ceil(since / periodMs)));
}

function permissionView(permission: DebitPermission, now: Date): PermissionView {
  const end = endOf(permission);
  return {
    dateCreated: permission.createdAt.toISOString(),
    purpose: permission.purpose,
    start: permission.start.toISOString(),
    period: permission.period,
    cancelAtPeriodEnd: permission.cancelAtPeriodEnd,
    termsUrl: permission.termsUrl,
    bundle: { name: permission.bundle.name, bundle: permission.bundle.query },
    ...(permission.canceledAt ? { canceledAt: permission.canceledAt.toISOString() } : {}),
    accepted: permission.accepted,
    active: permission.accepted && permission.start <= now && (!end || now < end),
    ...(end ? { end: end.toISOString() } : {}),
  };
}

export function debitView(debit: DebitWithPermissions, now: Date): DebitView {
  const permissions = debit.permissions.map((p) => permissionView(p, now));
  const latest = permissions.at(-1);
  const active = permissions.filter((p) => p.active).at(-1);
  return {
    dataDebitKey: debit.key,
    dateCreated: debit.createdAt.toISOString(),
    permissions,
    requestClientName: debit.requestClientName,
    requestClientUrl: debit.requestClientUrl,
    requestClientLogoUrl: debit.requestClientLogoUrl,
    ...(debit.requestApplicationId ? { requestApplicationId: debit.requestApplicationId } : {}),
    ...(debit.requestDescription ? { requestDescription: debit.requestDescription } : {}),
    accepted: latest?.accepted ?? false,
    active: active !== undefined,
    ...(active ? { start: active.start, ...(active.end ? { end: active.end } : {}) } : {}),
    ...(active ? { permissionsActive: active } : {}),
    ...(latest ? { permissionsLatest: latest } : {}),
  };
}
