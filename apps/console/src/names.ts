// Whether a name is free for a new data store, and free ones to offer when it is not: asked of the
// server, which counts these checks apart from sign-ups.
import { call } from './api';

export interface NameCheck {
  available: boolean;
  /** Up to three free names; none when the name is available. */
  suggestions: string[];
}

export const checkName = (username: string, fullName: string) =>
  call<NameCheck>(`/api/signup/available?${new URLSearchParams({ username, fullName })}`, { anonymous: true });
