// The session kit against a fake careers-api that keeps the contract's session rules: several
// "tabs" (kit instances) share one cookie jar, one lock manager, one storage and real
// BroadcastChannels, as the tabs of one browser do. Run: node --test clients/js/test
import { test } from "node:test";
import assert from "node:assert/strict";

import { createSession, ApiError } from "../session-kit.js";

/** A fake API: one user, access tokens that can be expired at will, CSRF bound to them. A
 * request carries the access cookie it was sent with; one answered after a refresh replaced that
 * token is refused with `session_ended` (the contract's grace window, §3 and §8). Setting
 * `server.gate` to a promise holds the requests sent meanwhile on the wire until it resolves. */
function fakeApi({ cookiesReadable = true } = {}) {
  const jar = new Map();
  const server = { generation: 0, expired: false, patches: 0, csrf: null, ended: false, requests: [] };
  const issue = () => {
    server.generation += 1;
    server.expired = false;
    server.csrf = `csrf-${server.generation}`;
    jar.set("jwt_access", `access-${server.generation}`);
    jar.set("CSRF_TOKEN", server.csrf);
    return { csrf: server.csrf };
  };
  const reply = (status, body) => ({
    status,
    text: async () => (body === undefined ? "" : JSON.stringify(body)),
  });
  const error = (status, code) => reply(status, { error: { code, message: code } });
  async function fetch(url, init) {
    const path = new URL(url, "http://api.test").pathname;
    const method = init.method;
    server.requests.push(`${method} ${path}`);
    assert.equal(init.credentials, "include");
    const csrf = init.headers["X-CSRF-Token"];
    const token = jar.get("jwt_access");
    await (server.gate || new Promise((resolve) => setTimeout(resolve, 5)));
    if (method === "POST" && path === "/identities/sessions") {
      server.ended = false;
      return reply(201, { ...issue(), access_expires_at: "", session_expires_at: "" });
    }
    if (!token) return error(401, "unauthenticated");
    if (server.ended) return error(401, "session_ended");
    if (token !== `access-${server.generation}`) return error(401, "session_ended");
    const unsafe = !["GET", "HEAD", "OPTIONS"].includes(method);
    if (unsafe && csrf !== server.csrf) return error(403, "csrf_failed");
    if (method === "PATCH" && path === "/identities/sessions/current") {
      server.patches += 1;
      return reply(200, issue());
    }
    if (method === "DELETE" && path === "/identities/sessions/current") {
      jar.clear();
      return reply(204);
    }
    if (server.expired) return error(401, "access_expired");
    if (method === "GET" && path === "/identities/sessions") {
      return reply(200, { sessions: [{ id: "s1", current: true }] });
    }
    return reply(200, { id: 1, path });
  }
  const cookies = cookiesReadable
    ? () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
    : null;
  return { server, fetch, cookies, jar };
}

/** One lock manager for every tab: callbacks of one name run one at a time. */
function sharedLocks() {
  const tails = new Map();
  let held = 0;
  return {
    request(name, callback) {
      const previous = tails.get(name) || Promise.resolve();
      const run = previous.then(async () => {
        held += 1;
        assert.equal(held, 1, "one holder at a time");
        try {
          return await callback();
        } finally {
          held -= 1;
        }
      });
      tails.set(name, run.catch(() => {}));
      return run;
    },
  };
}

function sharedStorage() {
  const map = new Map();
  return { getItem: (k) => (map.has(k) ? map.get(k) : null), setItem: (k, v) => map.set(k, v) };
}

function tabs(api, n, extra = {}) {
  const locks = sharedLocks();
  const storage = sharedStorage();
  const channel = `test-${Math.random()}`;
  return Array.from({ length: n }, () =>
    createSession({
      context: "user",
      baseUrl: "http://api.test",
      fetch: api.fetch,
      cookies: api.cookies,
      locks,
      storage,
      channel,
      ...extra,
    }),
  );
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

test("five tabs with an expired access token refresh with exactly one PATCH and all continue", { timeout: 10_000 }, async () => {
  const api = fakeApi();
  const all = tabs(api, 5);
  await all[0].login("ada@example.com", "correct-horse-battery");
  api.server.expired = true;
  const answers = await Promise.all(all.map((tab) => tab.request("GET", "/identities/user/1")));
  assert.equal(api.server.patches, 1);
  for (const answer of answers) assert.equal(answer.id, 1);
  all.forEach((tab) => tab.close());
});

test("a request refused because another tab's refresh replaced its token meanwhile is retried, not a logout", { timeout: 10_000 }, async () => {
  const api = fakeApi();
  const [first, second] = tabs(api, 2);
  const ended = [];
  for (const tab of [first, second]) tab.on("session_ended", () => ended.push(tab));
  await first.login("ada@example.com", "x");
  api.server.expired = true;
  let deliver;
  api.server.gate = new Promise((resolve) => (deliver = resolve));
  const late = second.request("GET", "/identities/user/1");
  api.server.gate = null;
  await first.request("GET", "/identities/user/1");
  assert.equal(api.server.patches, 1);
  deliver();
  const answer = await late;
  assert.equal(answer.id, 1);
  assert.equal(api.server.patches, 1, "no second refresh");
  assert.deepEqual(ended, [], "nobody was logged out");
  first.close();
  second.close();
});

test("unsafe requests carry the CSRF token: from the cookie, else from the last body or another tab", { timeout: 10_000 }, async () => {
  const readable = fakeApi();
  const [tab] = tabs(readable, 1);
  await tab.login("ada@example.com", "x");
  readable.server.csrf = "csrf-changed";
  readable.jar.set("CSRF_TOKEN", "csrf-changed");
  assert.equal(tab.csrfToken(), "csrf-changed", "the cookie wins when readable");
  await tab.request("PATCH", "/identities/user/1", {});
  tab.close();

  // A dashboard on another registrable domain cannot read the API's cookies.
  const crossSite = fakeApi({ cookiesReadable: false });
  const [first, second] = tabs(crossSite, 2);
  await first.login("ada@example.com", "x");
  await settle();
  assert.equal(second.csrfToken(), "csrf-1", "shared by the login's announcement");
  crossSite.server.expired = true;
  await first.request("GET", "/identities/user/1");
  await settle();
  assert.equal(crossSite.server.patches, 1);
  assert.equal(second.csrfToken(), "csrf-2", "the refresh's CSRF reaches the other tab");
  const written = await second.request("PATCH", "/identities/user/1", {});
  assert.equal(written.id, 1);
  first.close();
  second.close();
});

test("a tab opened or reloaded after the login finds the CSRF token of the last body; a logout forgets it", { timeout: 10_000 }, async () => {
  const crossSite = fakeApi({ cookiesReadable: false });
  const storage = sharedStorage();
  const open = () =>
    createSession({ context: "user", baseUrl: "http://api.test", fetch: crossSite.fetch, cookies: null, storage, channel: null });
  const first = open();
  await first.login("ada@example.com", "x");
  const later = open();
  assert.equal(later.csrfToken(), "csrf-1");
  const written = await later.request("PATCH", "/identities/user/1", {});
  assert.equal(written.id, 1);
  await later.logout();
  assert.equal(open().csrfToken(), null);
});

test("session_ended in one tab and a logout in another reach every tab", { timeout: 10_000 }, async () => {
  const api = fakeApi();
  const all = tabs(api, 3);
  const seen = all.map(() => []);
  all.forEach((tab, i) => {
    tab.on("session_ended", () => seen[i].push("session_ended"));
    tab.on("logout", () => seen[i].push("logout"));
  });
  await all[0].login("ada@example.com", "x");
  api.server.ended = true;
  await assert.rejects(all[1].request("GET", "/identities/user/1"), (error) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 401);
    assert.equal(error.code, "session_ended");
    return true;
  });
  await settle();
  assert.deepEqual(seen, [["session_ended"], ["session_ended"], ["session_ended"]]);

  await all[2].login("ada@example.com", "x");
  await all[2].logout();
  await settle();
  assert.deepEqual(seen.map((s) => s.at(-1)), ["logout", "logout", "logout"]);
  assert.equal(api.jar.size, 0, "the cookies are gone");
  all.forEach((tab) => tab.close());
});

test("a failed refresh is an error, not a loop", { timeout: 10_000 }, async () => {
  const api = fakeApi();
  const [tab] = tabs(api, 1);
  await tab.login("ada@example.com", "x");
  api.server.expired = true;
  api.server.csrf = "not-what-the-tab-has";
  api.jar.delete("CSRF_TOKEN");
  await assert.rejects(tab.request("GET", "/identities/user/1"), (error) => error.code === "csrf_failed");
  assert.equal(api.server.patches, 0);
  assert.equal(api.server.requests.filter((r) => r.startsWith("GET")).length, 1, "no retry without a refresh");
  tab.close();
});

test("sessions and the other contexts' paths", { timeout: 10_000 }, async () => {
  const api = fakeApi();
  const [tab] = tabs(api, 1);
  await tab.login("ada@example.com", "x");
  assert.deepEqual(await tab.sessions(), [{ id: "s1", current: true }]);
  assert.throws(() => createSession({ context: "team", fetch: api.fetch }), /context/);
  tab.close();
});
