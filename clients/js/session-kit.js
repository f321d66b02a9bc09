// careers-api session kit: one dependency-free ES module for the four frontends.
//
//   import { createSession } from "./session-kit.js";
//   const api = createSession({ context: "user", baseUrl: "https://api.example.com" });
//   await api.login("ada@example.com", "correct-horse-battery");
//   const me = await api.request("GET", "/identities/user/1");
//   api.on("session_ended", () => showLogin());
//
// What it does for a frontend (docs/FRONTEND.md, "The session kit"):
// - every request sends the cookies (`credentials: "include"`) and, on unsafe methods, the
//   context's CSRF token in `X-CSRF-Token`: read from the CSRF cookie when the page can read
//   it, else the one of the last login or refresh body (a dashboard on another registrable
//   domain cannot read the API's cookies);
// - a 401 `access_expired` refreshes the session once and retries the request once;
// - one refresh for all tabs: tabs take a lock (the Web Locks API) before refreshing; a tab that
//   waited finds, in IndexedDB, that another tab refreshed meanwhile and reuses its result
//   (the new access cookie is the browser's, shared by every tab); the new CSRF token is kept
//   there too and announced over a BroadcastChannel;
// - the CSRF token of the last login or refresh is kept in `localStorage`, so that a
//   dashboard that cannot read the API's cookies keeps it across reloads and in new tabs (it is
//   not a credential: it only works together with the HttpOnly access cookie);
// - `session_ended` and `logout` are announced to every tab of the same origin, so they leave
//   the app together.

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

const CONTEXTS = {
  user: {
    sessions: "/identities/sessions",
    password: "/identities/password",
    csrfCookie: "CSRF_TOKEN",
  },
  admin: {
    sessions: "/team/identities/admins/sessions",
    password: "/team/identities/admins/password",
    csrfCookie: "TEAM_CSRF_TOKEN",
  },
};

/** The error of an answer that is not 2xx: the contract's `{"error": {...}}` body. */
export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.code = error.code || "unknown";
    this.fields = error.fields;
  }
}

function readCookie(cookieSource, name) {
  const text = cookieSource ? cookieSource() : "";
  for (const part of text.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return null;
}

/** `localStorage`'s two methods over a map, where there is no `localStorage`. */
function memoryStorage() {
  const map = new Map();
  return {
    getItem: (key) => (map.has(key) ? map.get(key) : null),
    setItem: (key, value) => map.set(key, String(value)),
  };
}

/**
 * The record of the last refresh, `{at, csrf}`, in IndexedDB. Unlike `localStorage`, whose
 * writes reach the other tabs' processes some time later, a committed IndexedDB transaction is
 * seen by every transaction that begins after it: a tab that takes the refresh lock after
 * another released it always finds that tab's refresh.
 */
function indexedDbRecords(name) {
  let database = null;
  const open = () =>
    new Promise((resolve, reject) => {
      const request = globalThis.indexedDB.open(name, 1);
      request.onupgradeneeded = () => request.result.createObjectStore("records");
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  const run = async (mode, action) => {
    database = database || open();
    const db = await database;
    return new Promise((resolve, reject) => {
      const transaction = db.transaction("records", mode);
      const request = action(transaction.objectStore("records"));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  };
  return {
    get: (key) => run("readonly", (store) => store.get(key)),
    put: (key, value) => run("readwrite", (store) => store.put(value, key)),
  };
}

/** The same over a `localStorage`-like object (tests, or a browser without IndexedDB). */
function storageRecords(storage) {
  return {
    get: async (key) => JSON.parse(storage.getItem(key)),
    put: async (key, value) => storage.setItem(key, JSON.stringify(value)),
  };
}

/** A lock manager that runs callbacks one at a time per name, within this page only. */
function localLocks() {
  const tails = new Map();
  return {
    request(name, callback) {
      const previous = tails.get(name) || Promise.resolve();
      const run = previous.then(() => callback());
      tails.set(name, run.catch(() => {}));
      return run;
    },
  };
}

/**
 * A client of one session context.
 *
 * Options (every one but `context` has a browser default; tests inject their own):
 * `context` ("user" | "admin"), `baseUrl` (""), `fetch`, `locks` (`navigator.locks`),
 * `channel` (a `BroadcastChannel`, or a name for one; null: no cross-tab messages),
 * `cookies` (a function returning `document.cookie`; null when the API's cookies are not
 * readable), `storage` (`localStorage`), `records` (where the last refresh is recorded:
 * IndexedDB, or `storage` when that is given), `now` (a clock in milliseconds).
 */
export function createSession(options) {
  const context = CONTEXTS[options.context];
  if (!context) throw new Error(`context must be "user" or "admin", got ${options.context}`);
  const baseUrl = options.baseUrl || "";
  const doFetch = options.fetch || globalThis.fetch.bind(globalThis);
  const locks =
    options.locks || (globalThis.navigator && globalThis.navigator.locks) || localLocks();
  const cookies =
    options.cookies !== undefined
      ? options.cookies
      : globalThis.document
        ? () => globalThis.document.cookie
        : null;
  const now = options.now || (() => Date.now());
  const channelName = `careers-session-${options.context}`;
  const channel =
    options.channel === null
      ? null
      : typeof options.channel === "object" && options.channel
        ? options.channel
        : typeof BroadcastChannel === "function"
          ? new BroadcastChannel(options.channel || channelName)
          : null;
  const lockName = `careers-refresh-${options.context}`;
  const storage = options.storage || globalThis.localStorage || memoryStorage();
  const records =
    options.records ||
    (!options.storage && globalThis.indexedDB
      ? indexedDbRecords("careers-session-kit")
      : storageRecords(storage));
  const refreshKey = `careers-refreshed-${options.context}`;
  const csrfKey = `careers-csrf-${options.context}`;

  // The CSRF token of the last login or refresh body, of this tab or another.
  let csrfFromBody = storage.getItem(csrfKey) || null;
  function rememberCsrf(token) {
    csrfFromBody = token || null;
    storage.setItem(csrfKey, token || "");
  }
  let inFlight = null;
  const listeners = new Map();

  function emit(type, detail) {
    for (const listener of listeners.get(type) || []) listener(detail);
  }

  function announce(type, detail) {
    emit(type, detail);
    if (channel) channel.postMessage({ type, ...detail });
  }

  if (channel) {
    channel.onmessage = (event) => {
      const message = event.data || {};
      if ((message.type === "refreshed" || message.type === "login") && message.csrf) {
        csrfFromBody = message.csrf;
      } else if (message.type === "logout" || message.type === "session_ended") {
        csrfFromBody = null;
      }
      emit(message.type, message);
    };
  }

  function csrfToken() {
    return readCookie(cookies, context.csrfCookie) || csrfFromBody;
  }

  async function send(method, path, body) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (!SAFE.has(method)) {
      const token = csrfToken();
      if (token) headers["X-CSRF-Token"] = token;
    }
    const response = await doFetch(baseUrl + path, {
      method,
      headers,
      credentials: "include",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    return { status: response.status, data };
  }

  function fail(status, data) {
    const error = new ApiError(status, data);
    if (status === 401 && error.code === "session_ended") {
      rememberCsrf(null);
      announce("session_ended", { context: options.context });
    }
    throw error;
  }

  /** The last refresh any tab of this origin made: `{at, csrf}`. */
  async function lastRefresh() {
    try {
      return (await records.get(refreshKey)) || { at: 0 };
    } catch {
      return { at: 0 };
    }
  }

  /** The refresh itself: one PATCH, under the cross-tab lock, unless another tab did it. */
  async function refreshOnce(askedAt) {
    return locks.request(lockName, async () => {
      const last = await lastRefresh();
      if (last.at >= askedAt) {
        if (last.csrf) csrfFromBody = last.csrf;
        return { csrf: last.csrf, reused: true };
      }
      const { status, data } = await send("PATCH", `${context.sessions}/current`);
      if (status !== 200) fail(status, data);
      rememberCsrf(data.csrf);
      const at = Math.max(now(), askedAt);
      // Written before the lock is released: the next holder reads it.
      await records.put(refreshKey, { at, csrf: data.csrf }).catch(() => {});
      announce("refreshed", { csrf: data.csrf, at });
      return data;
    });
  }

  /**
   * Refreshes the session: one refresh for every caller and every tab waiting at once. With
   * `since` (a request's start), a refresh any tab finished after it is reused.
   */
  function refresh(since) {
    if (!inFlight) {
      const askedAt = since === undefined ? now() : since;
      inFlight = refreshOnce(askedAt).finally(() => {
        inFlight = null;
      });
    }
    return inFlight;
  }

  /** Whether a refresh of any tab finished after `askedAt`, once any refresh under way ended. */
  function refreshedSince(askedAt) {
    return locks.request(lockName, async () => (await lastRefresh()).at >= askedAt);
  }

  /**
   * A request of this context; refreshes once on 401 `access_expired` and retries once. A 401
   * `session_ended` for a request that a refresh of any tab overtook is retried once too: it was
   * sent with the access token that refresh replaced, which the API refuses without ending the
   * session (CONTRACT §3); only a second refusal ends the session in every tab.
   */
  async function request(method, path, body) {
    const askedAt = now();
    let answer = await send(method, path, body);
    const code = answer.status === 401 && answer.data && answer.data.error && answer.data.error.code;
    if (code === "access_expired") {
      await refresh(askedAt);
      answer = await send(method, path, body);
    } else if (code === "session_ended" && (await refreshedSince(askedAt))) {
      answer = await send(method, path, body);
    }
    if (answer.status >= 400) fail(answer.status, answer.data);
    return answer.data;
  }

  async function login(email, password, extra = {}) {
    const { status, data } = await send("POST", context.sessions, { email, password, ...extra });
    if (status !== 201) fail(status, data);
    rememberCsrf(data.csrf);
    announce("login", { csrf: data.csrf });
    return data;
  }

  async function logout() {
    const { status, data } = await send("DELETE", `${context.sessions}/current`);
    rememberCsrf(null);
    announce("logout", { context: options.context });
    if (status !== 204 && !(status === 401 && data && data.error && data.error.code === "session_ended")) {
      fail(status, data);
    }
  }

  return {
    request,
    refresh: () => refresh(),
    login,
    logout,
    /** The session of this tab: resolves while logged in, throws `ApiError` (401) otherwise. */
    current: async () => (await request("GET", `${context.sessions}/current`)).sessions,
    /** The caller's live sessions, most recently used first. */
    sessions: async () => (await request("GET", context.sessions)).sessions,
    /** Ends one session by its public `id`; the current one is a logout. */
    endSession: (id) => request("DELETE", `${context.sessions}/${encodeURIComponent(id)}`),
    /** Ends every session of the caller but this one. */
    endOtherSessions: () => request("DELETE", context.sessions),
    changePassword: (current, password) =>
      request("PATCH", context.password, { current_password: current, password }),
    /** `login`, `logout`, `refreshed` or `session_ended`, from this tab or another. */
    on(type, listener) {
      if (!listeners.has(type)) listeners.set(type, new Set());
      listeners.get(type).add(listener);
      return () => listeners.get(type).delete(listener);
    },
    csrfToken,
    close() {
      if (channel && channel.close) channel.close();
    },
  };
}
