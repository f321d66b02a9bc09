// Types of session-kit.js. The API's request and response bodies are in `api-types.d.ts`,
// generated from `/openapi.json` by openapi-typescript (CI checks that it is up to date).

import type { components, paths } from "./api-types";

export type { components, paths };

export type Context = "user" | "admin";

/** The contract's error body as an exception: `status`, `code` (`access_expired`, ...). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields?: Record<string, string[]>;
}

export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

export interface RecordsLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<unknown>;
}

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export interface SessionOptions {
  context: Context;
  /** The API's origin, e.g. `https://api.example.com`; default: same origin. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Default: `navigator.locks`. */
  locks?: LockManagerLike;
  /** A channel, or its name; `null`: no cross-tab messages. */
  channel?: BroadcastChannel | string | null;
  /** Default: `() => document.cookie`; `null` when the API's cookies are not readable. */
  cookies?: (() => string) | null;
  /** Default: `localStorage`. */
  storage?: StorageLike;
  /** Where the last refresh is recorded for the other tabs. Default: IndexedDB, or `storage`
   * when that is given. */
  records?: RecordsLike;
  now?: () => number;
}

/** The body of a refresh (a login's has the identity besides). */
export type AccessBody = components["schemas"]["Refreshed"];
export type SessionView = components["schemas"]["SessionView"];

export type SessionEvent = "login" | "logout" | "refreshed" | "session_ended";

export interface Session {
  /** A request of this context: cookies, CSRF on unsafe methods, one refresh on `access_expired`. */
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** One refresh for every caller and tab waiting at once. */
  refresh(): Promise<AccessBody | { csrf?: string; reused: true }>;
  /** `extra`: `{ otp }` or `{ recovery_code }` for an admin with a second factor. */
  login(email: string, password: string, extra?: Record<string, string>): Promise<AccessBody>;
  logout(): Promise<void>;
  /** The session of this tab; throws `ApiError` (401) when logged out. */
  current(): Promise<SessionView>;
  sessions(): Promise<SessionView[]>;
  endSession(id: string): Promise<unknown>;
  endOtherSessions(): Promise<unknown>;
  changePassword(current: string, password: string): Promise<AccessBody>;
  /** Listens to this tab's and other tabs' events; returns the unsubscribe function. */
  on(type: SessionEvent, listener: (detail: Record<string, unknown>) => void): () => void;
  csrfToken(): string | null;
  close(): void;
}

export function createSession(options: SessionOptions): Session;
