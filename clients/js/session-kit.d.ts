// Types of session-kit.js. The API's own request and response bodies are described by
// `/openapi.json` (Swagger UI at /docs).

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
  now?: () => number;
}

export interface AccessBody {
  csrf: string;
  access_expires_at: string;
  session_expires_at: string;
}

export interface SessionView {
  id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string;
  current: boolean;
}

export type SessionEvent = "login" | "logout" | "refreshed" | "session_ended";

export interface Session {
  /** A request of this context: cookies, CSRF on unsafe methods, one refresh on `access_expired`. */
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** One refresh for every caller and tab waiting at once. */
  refresh(): Promise<AccessBody | { csrf?: string; reused: true }>;
  /** `extra`: `{ otp }` or `{ recovery_code }` for an admin with a second factor. */
  login(email: string, password: string, extra?: Record<string, string>): Promise<AccessBody>;
  logout(): Promise<void>;
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
