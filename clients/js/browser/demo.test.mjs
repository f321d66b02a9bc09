// Real-browser tests of the session kit: Playwright (playwright-core) drives Debian's chromium
// against the real binary serving the /demo page (issue "frontend kit", CONTRACT §13).
//
//   cargo build && npm ci --prefix clients/js && node --test clients/js/browser
//
// CAREERS_API_BIN names the binary (default target/debug/careers-api), CHROMIUM the browser
// (default /usr/bin/chromium). Every test starts its own server on a fresh SQLite file with the
// demo data; ACCESS_TOKEN_LIFETIME (development and test only) makes access tokens expire in
// seconds instead of an hour.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const bin = process.env.CAREERS_API_BIN || path.join(root, "target/debug/careers-api");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const ACCESS_SECONDS = 3;
const DAY = 24 * 60 * 60;

/** A port nothing listens on now. */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The binary on a fresh SQLite file with the demo data; `env` adds to a clean environment. */
async function startApi(env) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "careers-browser-"));
  const port = await freePort();
  const fullEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: `sqlite://${dir}/careers.db`,
    MAIL_OUTBOX_DIR: path.join(dir, "outbox"),
    BIND_ADDR: `127.0.0.1:${port}`,
    RUST_LOG: "warn",
    ACCESS_TOKEN_LIFETIME: `${ACCESS_SECONDS}s`,
    ...env,
  };
  execFileSync(bin, ["seed", "--demo"], { env: fullEnv, stdio: "pipe" });
  const child = spawn(bin, [], { env: fullEnv, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${url}/health/ready`).then((r) => r.ok, () => false);
    if (up) break;
    if (i > 100 || child.exitCode !== null) throw new Error(`the server did not start:\n${stderr}`);
    await sleep(100);
  }
  return {
    url,
    port,
    stop: () => {
      child.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

let browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: chromiumPath,
    // The cross-site test's two registrable domains, both served by the local TLS proxy.
    args: ["--host-resolver-rules=MAP api.test 127.0.0.1, MAP dashboard.test 127.0.0.1"],
  });
});
after(async () => {
  await browser?.close();
});

/** Runs `body(api, context)` against a fresh server (`env`) in a fresh browser profile. */
async function withServer(env, contextOptions, body) {
  const api = await startApi(env);
  const context = await browser.newContext(contextOptions);
  try {
    await body(api, context);
  } finally {
    await context.close();
    api.stop();
  }
}

/** Opens /demo in a new tab and waits until the page knows whether it is logged in. */
async function openDemo(context, url) {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector("body[data-state]");
  return page;
}

async function logIn(page) {
  await page.click("#login button");
  await page.waitForSelector('body[data-state="in"]');
}

/** Five tabs of `url`: the first logs in, the other four find the session on opening. */
async function fiveLoggedInTabs(context, url) {
  const first = await openDemo(context, url);
  await logIn(first);
  const tabs = [first];
  for (let i = 1; i < 5; i++) tabs.push(await openDemo(context, url));
  for (const tab of tabs) assert.equal(await state(tab), "in", "every tab finds the session");
  return tabs;
}

const state = (page) => page.evaluate(() => document.body.dataset.state);
const logCount = (page, text) =>
  page.evaluate((t) => document.getElementById("log").textContent.split(t).length - 1, text);

/** Waits until the page's log shows `text` more than `before` times. */
function waitForLog(page, text, before) {
  return page.waitForFunction(
    ([t, n]) => document.getElementById("log").textContent.split(t).length - 1 > n,
    [text, before],
  );
}

test("login sets the user context's cookies with the development attributes and lists this session", async () => {
  await withServer({ APP_ENV: "development" }, {}, async (api, context) => {
    const page = await openDemo(context, `${api.url}/demo`);
    assert.equal(await state(page), "out");
    const loginAnswer = page.waitForResponse((r) => r.request().method() === "POST");
    await logIn(page);
    const answer = await loginAnswer;
    assert.equal(answer.status(), 201);
    const body = await answer.json();
    await waitForLog(page, "sessions listed", 0);
    assert.match(await page.textContent("#sessions"), /\(this one\)/);

    const cookies = Object.fromEntries((await context.cookies(api.url)).map((c) => [c.name, c]));
    assert.deepEqual(Object.keys(cookies).sort(), ["CSRF_TOKEN", "jwt_access"]);
    const weekAhead = Date.now() / 1000 + 7 * DAY;
    for (const [name, httpOnly] of [["jwt_access", true], ["CSRF_TOKEN", false]]) {
      const cookie = cookies[name];
      assert.equal(cookie.httpOnly, httpOnly, name);
      assert.equal(cookie.secure, false, `${name}: development is plain HTTP`);
      assert.equal(cookie.sameSite, "Lax", name);
      assert.equal(cookie.path, "/", name);
      assert.ok(Math.abs(cookie.expires - weekAhead) < 120, `${name} ends with the session`);
    }
    assert.equal(cookies.CSRF_TOKEN.value, body.csrf, "the CSRF cookie is the body's token");
    const readable = await page.evaluate(() => document.cookie);
    assert.match(readable, /CSRF_TOKEN=/);
    assert.doesNotMatch(readable, /jwt_access/, "the access cookie is HttpOnly");
  });
});

test("five tabs whose access token expired refresh with exactly one PATCH and all continue", async () => {
  await withServer({ APP_ENV: "development" }, {}, async (api, context) => {
    const tabs = await fiveLoggedInTabs(context, `${api.url}/demo`);

    await sleep((ACCESS_SECONDS + 1.5) * 1000);
    const wire = [];
    context.on("response", (r) => {
      const method = r.request().method();
      if (r.url().startsWith(api.url) && method !== "OPTIONS") wire.push(`${method} ${r.status()}`);
    });
    const before = await Promise.all(tabs.map((tab) => logCount(tab, "sessions listed")));
    await Promise.all(tabs.map((tab) => tab.click("#list")));
    await Promise.all(tabs.map((tab, i) => waitForLog(tab, "sessions listed", before[i]))).catch(async (e) => {
      const logs = await Promise.all(tabs.map((tab) => tab.textContent("#log")));
      throw new Error(`${e.message}\nwire: ${wire}\nlogs:\n${logs.join("\n--\n")}`);
    });

    assert.equal(wire.filter((w) => w.startsWith("PATCH")).length, 1, `one PATCH on the wire: ${wire}`);
    assert.deepEqual(wire.filter((w) => w.startsWith("PATCH")), ["PATCH 200"]);
    assert.ok(
      wire.filter((w) => w === "GET 401").length >= 1,
      `the tokens had expired (the test would prove nothing otherwise): ${wire}`,
    );
    assert.equal(wire.filter((w) => w === "GET 200").length, 5, `every tab continued: ${wire}`);
    for (const tab of tabs) assert.equal(await state(tab), "in");
  });
});

test("a logout in one tab sends every other tab to the logged-out state", async () => {
  await withServer({ APP_ENV: "development" }, {}, async (api, context) => {
    const tabs = await fiveLoggedInTabs(context, `${api.url}/demo`);

    const logout = tabs[2].waitForResponse((r) => r.request().method() === "DELETE");
    await tabs[2].click("#logout");
    assert.equal((await logout).status(), 204);
    await Promise.all(tabs.map((tab) => tab.waitForSelector('body[data-state="out"]')));
    assert.deepEqual(await context.cookies(api.url), [], "both cookies deleted");

    // The API agrees: a reloaded tab finds no session.
    await tabs[4].reload();
    await tabs[4].waitForSelector("body[data-state]");
    assert.equal(await state(tabs[4]), "out");
  });
});

/** A TLS reverse proxy on `port` for two registrable domains: `dashboard.test` serves the demo
 * page and the kit as a static site would, `api.test` forwards to the API (Host kept). */
async function startProxy(port, apiPort) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "careers-tls-"));
  const key = path.join(dir, "key.pem");
  const cert = path.join(dir, "cert.pem");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=api.test",
    "-addext", "subjectAltName=DNS:api.test,DNS:dashboard.test",
  ], { stdio: "pipe" });
  const apiBase = `https://api.test:${port}`;
  const page = fs
    .readFileSync(path.join(root, "crates/careers-api/src/demo/index.html"), "utf8")
    .replace('<meta name="careers-api-base" content="">', `<meta name="careers-api-base" content="${apiBase}">`);
  const kit = fs.readFileSync(path.join(root, "clients/js/session-kit.js"), "utf8");
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    const host = (req.headers.host || "").split(":")[0];
    if (host === "dashboard.test") {
      const pathname = new URL(req.url, "https://dashboard.test").pathname;
      if (pathname === "/demo") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
      } else if (pathname === "/demo/session-kit.js") {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(kit);
      } else {
        res.writeHead(404).end();
      }
      return;
    }
    const upstream = http.request(
      { host: "127.0.0.1", port: apiPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    apiBase,
    dashboard: `https://dashboard.test:${port}`,
    stop: () => {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("an admin dashboard on another registrable domain works over TLS with partitioned cookies and the CSRF token from the body", async () => {
  const proxyPort = await freePort();
  const dashboardOrigin = `https://dashboard.test:${proxyPort}`;
  const env = {
    APP_ENV: "test",
    JWT_SIGNING_SECRET: "browser-test-signing-secret-of-32-bytes!",
    COOKIE_PARTITIONED: "admin",
    CORS_ALLOWED_ORIGINS: dashboardOrigin,
  };
  await withServer(env, { ignoreHTTPSErrors: true }, async (api, context) => {
    const proxy = await startProxy(proxyPort, api.port);
    try {
      await dashboardSession(proxy, context);
    } finally {
      proxy.stop();
    }
  });
});

/** The cross-site dashboard's flow: login, an unsafe request, a refresh, a reload. */
async function dashboardSession(proxy, context) {
  const page = await openDemo(context, `${proxy.dashboard}/demo?context=admin`);
  assert.equal(await state(page), "out");
  const loginAnswer = page.waitForResponse((r) => r.request().method() === "POST");
  await logIn(page);
  const body = await (await loginAnswer).json();
  await waitForLog(page, "sessions listed", 0);

  const cookies = Object.fromEntries((await context.cookies(proxy.apiBase)).map((c) => [c.name, c]));
  assert.deepEqual(Object.keys(cookies).sort(), ["TEAM_CSRF_TOKEN", "team_jwt_access"]);
  for (const cookie of Object.values(cookies)) {
    assert.equal(cookie.secure, true, cookie.name);
    assert.equal(cookie.sameSite, "None", cookie.name);
    // CHIPS: kept in the jar of the top-level site that embedded the request, the dashboard.
    assert.match(String(cookie.partitionKey), /^https:\/\/dashboard\.test/, `${cookie.name} is partitioned`);
  }
  assert.equal(cookies.TEAM_CSRF_TOKEN.value, body.csrf);
  assert.doesNotMatch(
    await page.evaluate(() => document.cookie),
    /TEAM_CSRF_TOKEN/,
    "the dashboard cannot read the API's cookies: the kit takes the CSRF token from the body",
  );

  // An unsafe request with the token from the body: ending the other sessions.
  const ended = page.waitForResponse((r) => r.request().method() === "DELETE");
  await page.click("#others");
  const deleteAnswer = await ended;
  assert.equal(deleteAnswer.status(), 204);
  assert.equal(deleteAnswer.request().headers()["x-csrf-token"], body.csrf);

  // After the access token expired: one refresh (CSRF from the body), then the new token.
  await sleep((ACCESS_SECONDS + 1.5) * 1000);
  const refreshed = page.waitForResponse((r) => r.request().method() === "PATCH");
  const listed = await logCount(page, "sessions listed");
  await page.click("#list");
  const refreshAnswer = await refreshed;
  assert.equal(refreshAnswer.status(), 200);
  const newCsrf = (await refreshAnswer.json()).csrf;
  assert.notEqual(newCsrf, body.csrf);
  await waitForLog(page, "sessions listed", listed);

  // A reload keeps the session (the partitioned cookie) and the last body's CSRF token.
  await page.reload();
  await page.waitForSelector('body[data-state="in"]');
  const again = page.waitForResponse((r) => r.request().method() === "DELETE");
  await page.click("#others");
  const againAnswer = await again;
  assert.equal(againAnswer.status(), 204);
  assert.equal(againAnswer.request().headers()["x-csrf-token"], newCsrf);
}

/** The marketplace search page's state once a search answered, and its result titles. */
async function searchResults(page) {
  await page.waitForSelector('body[data-state="ready"]');
  return page.$$eval("#results li strong", (items) => items.map((i) => i.textContent));
}

/**
 * Runs `action` and waits until the page has rendered the search it started (the page counts
 * its renders), so that no assertion reads the previous answer. Resolves to the request's URL.
 */
async function searched(page, action) {
  const before = Number((await page.getAttribute("body", "data-rendered")) || 0);
  const answer = page.waitForResponse((r) => r.url().includes("/marketplace/careers/jobs"));
  await action();
  const url = (await answer).url();
  await page.waitForSelector(`body[data-rendered="${before + 1}"]`);
  return url;
}

/** A facet's counts as the page shows them: `{value: count}`. */
function facetCounts(page, facet) {
  return page.$$eval(`#facet-${facet} input`, (inputs) =>
    Object.fromEntries(
      inputs.map((i) => [i.value, Number(i.parentElement.querySelector(".count").textContent.replace(/\D/g, ""))]),
    ),
  );
}

test("the marketplace search page searches, ticks a facet, and shows the counts and results", async () => {
  await withServer({ APP_ENV: "development" }, { viewport: { width: 1100, height: 800 } }, async (api, context) => {
    const page = await context.newPage();
    await page.goto(`${api.url}/demo/search`);
    // Every open demo job at first: Acme's two engineers, Globex's analyst and designer.
    assert.deepEqual((await searchResults(page)).length, 4);

    await searched(page, async () => {
      await page.fill("#q", "ENGINEER");
      await page.click("#search button");
    });
    assert.deepEqual((await searchResults(page)).sort(), ["Platform Engineer", "Senior Rust Engineer"]);
    assert.match(await page.textContent("#summary"), /^2 open jobs/);
    assert.deepEqual(await facetCounts(page, "workplace_type"), { hybrid: 1, remote: 1 });
    assert.deepEqual(await facetCounts(page, "country_code"), { DE: 2 });

    // Ticking "remote": one result; the workplace facet still counts the other choice.
    const request = await searched(page, () => page.check('#facet-workplace_type input[value="remote"]'));
    assert.match(request, /workplace_type=remote/);
    assert.deepEqual(await searchResults(page), ["Platform Engineer"]);
    assert.deepEqual(await facetCounts(page, "workplace_type"), { hybrid: 1, remote: 1 });
    assert.deepEqual(await facetCounts(page, "employment_type"), { full_time: 1 });

    // A salary floor: Platform Engineer pays up to 90,000 EUR a year.
    await searched(page, async () => {
      await page.fill('input[name="salary_min"]', "95000");
      await page.click("#search button");
    });
    assert.deepEqual(await searchResults(page), []);
    await searched(page, async () => {
      await page.fill('input[name="salary_min"]', "90000");
      await page.click("#search button");
    });
    assert.deepEqual(await searchResults(page), ["Platform Engineer"]);

    const shots = path.join(root, "target", "ci-artifacts");
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, "marketplace-search.png"), fullPage: true });
  });
});
