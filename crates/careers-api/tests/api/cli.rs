//! The command line (CONTRACT §7) and start-up configuration checks (CONTRACT §1).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use careers_api::areas::{ADMIN, USER};
use reqwest::StatusCode;

use crate::backend_tests;
use crate::helpers::*;

fn careers_api(env: &[(String, String)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_careers-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUST_LOG", "off")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .args(args)
        .output()
        .expect("run careers-api")
}

/// As `careers_api`, with `input` written to the command's standard input.
fn careers_api_stdin(env: &[(String, String)], args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_careers-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUST_LOG", "off")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run careers-api");
    let mut stdin = child.stdin.take().expect("stdin");
    // The command may exit before reading (a usage error): a broken pipe is not a failure here.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().expect("wait for careers-api")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn app_env(app: &TestApp) -> Vec<(String, String)> {
    app.env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

backend_tests! {
    async fn cli_creates_admins_and_users_who_can_log_in(backend) {
        let app = TestApp::spawn(backend).await;
        let env = app_env(&app);
        let migrate = careers_api(&env, &["migrate"]);
        assert!(migrate.status.success(), "{}", String::from_utf8_lossy(&migrate.stderr));
        let admin = careers_api(&env, &["admins", "create", "--email", "Boss@Example.com", "--password", PASSWORD]);
        assert!(admin.status.success(), "{}", String::from_utf8_lossy(&admin.stderr));
        let user = careers_api(&env, &[
            "users", "create", "--email", "cli@example.com", "--password", PASSWORD,
            "--first-name", "Cli", "--last-name", "User", "--country", "DE",
        ]);
        assert!(user.status.success(), "{}", String::from_utf8_lossy(&user.stderr));
        app.login(&ADMIN, "boss@example.com").await;
        let creds = app.login(&USER, "cli@example.com").await;
        let id = app.claims(&creds).subject;
        let me: serde_json::Value = app.read(&creds, id).await.json().await.unwrap();
        assert_eq!(me["country_id"], 3);
        // The same e-mail, differently cased, is taken.
        let again = careers_api(&env, &["admins", "create", "--email", "BOSS@example.com", "--password", PASSWORD]);
        assert!(!again.status.success());
        let short = careers_api(&env, &["admins", "create", "--email", "x@example.com", "--password", "short"]);
        assert!(!short.status.success());
        assert!(String::from_utf8_lossy(&short.stderr).contains("at least 12"));
    }

    async fn cli_password_stdin_creates_accounts_that_log_in_with_that_password(backend) {
        let app = TestApp::spawn(backend).await;
        let env = app_env(&app);
        let admin_password = "stdin admin password 1";
        let admin = careers_api_stdin(&env, &["admins", "create", "--email", "root@example.com",
                                              "--password-stdin"],
                                      &format!("{admin_password}\r\nsecond line\n"));
        assert!(admin.status.success(), "{}", stderr(&admin));
        let user_password = "stdin-user-password-1";
        let user = careers_api_stdin(&env, &[
            "users", "create", "--email", "piped@example.com", "--password-stdin",
            "--first-name", "Piped", "--last-name", "User", "--country", "DE",
        ], &format!("{user_password}\n"));
        assert!(user.status.success(), "{}", stderr(&user));
        // The first line without its line ending is the password: not more, not less.
        let response = app.login_raw(&ADMIN, "root@example.com", admin_password).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let response = app.login_raw(&ADMIN, "root@example.com", &format!("{admin_password}\r")).await;
        assert_error(response, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        let response = app.login_raw(&USER, "piped@example.com", user_password).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        // An operator's user has a verified e-mail (CONTRACT §14).
        let verified = "SELECT COUNT(*) FROM identities_users WHERE email = 'piped@example.com' \
                        AND email_verified_at IS NOT NULL";
        assert_eq!(crate::data_layer::scalar(&app, verified).await, "1");
        // The last line needs no line ending.
        let last = careers_api_stdin(&env, &["admins", "create", "--email", "eof@example.com",
                                             "--password-stdin"], "no-newline-password");
        assert!(last.status.success(), "{}", stderr(&last));
        let response = app.login_raw(&ADMIN, "eof@example.com", "no-newline-password").await;
        assert_eq!(response.status(), StatusCode::CREATED);
        // The minimum length holds for a piped password too; an empty input is refused.
        let short = careers_api_stdin(&env, &["admins", "create", "--email", "short@example.com",
                                              "--password-stdin"], "short\n");
        assert!(!short.status.success());
        assert!(stderr(&short).contains("at least 12"), "{}", stderr(&short));
        // So does zxcvbn's judgement (CONTRACT §10), the account's e-mail counting against it.
        for weak in ["password1234\n", "weakling@example.com\n"] {
            let refused = careers_api_stdin(&env, &["admins", "create", "--email", "weakling@example.com",
                                                    "--password-stdin"], weak);
            assert!(!refused.status.success());
            assert!(stderr(&refused).contains("too easy to guess"), "{}", stderr(&refused));
        }
        let weak_login = app.login_raw(&ADMIN, "weakling@example.com", "password1234").await;
        assert_error(weak_login, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        let empty = careers_api_stdin(&env, &["users", "create", "--email", "e@example.com",
                                              "--password-stdin", "--first-name", "E",
                                              "--last-name", "Mpty"], "");
        assert!(!empty.status.success());
        assert!(stderr(&empty).contains("no password"), "{}", stderr(&empty));
        for (ctx, email) in [(ADMIN, "short@example.com"), (USER, "e@example.com")] {
            let response = app.login_raw(&ctx, email, "short").await;
            assert_error(response, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        }
    }

    async fn cli_admins_set_password_replaces_the_admins_password(backend) {
        let app = TestApp::spawn(backend).await;
        let env = app_env(&app);
        let (admin_id, before) = app.admin_session("grace@example.com").await;
        let (_, other_admin) = app.admin_session("other@example.com").await;
        app.create_user("ada@example.com").await;
        let new_password = "a brand new admin password";
        let output = careers_api_stdin(&env, &["admins", "set-password", "--email",
                                               " Grace@Example.com "],
                                       &format!("{new_password}\n"));
        assert!(output.status.success(), "{}", stderr(&output));
        let notice = "SELECT COUNT(*) FROM mail_outbox WHERE recipient = 'grace@example.com' \
                      AND subject = 'Your password was set'";
        assert_eq!(crate::data_layer::scalar(&app, notice).await, "1", "the admin is told (CONTRACT §17)");
        if backend == Backend::PostgresRedis {
            // The admin's sessions end with the old password; other admins' stay.
            assert!(String::from_utf8_lossy(&output.stdout).contains("1 admin sessions ended"));
            assert_error(app.read(&before, admin_id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert!(app.record(&other_admin).await.is_some());
        } else {
            // The in-memory store lives in the server process: the CLI says so.
            assert!(stderr(&output).contains("in-memory token store"), "{}", stderr(&output));
        }
        let response = app.login_raw(&ADMIN, "grace@example.com", PASSWORD).await;
        assert_error(response, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
        let response = app.login_raw(&ADMIN, "grace@example.com", new_password).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        // Too short: refused, the password stays.
        let short = careers_api_stdin(&env, &["admins", "set-password", "--email",
                                              "grace@example.com"], "short\n");
        assert!(!short.status.success());
        assert!(stderr(&short).contains("at least 12"), "{}", stderr(&short));
        // Only admins: a user's e-mail names no admin.
        let user = careers_api_stdin(&env, &["admins", "set-password", "--email",
                                             "ada@example.com"], "another-long-password\n");
        assert!(!user.status.success());
        assert!(stderr(&user).contains("no admin"), "{}", stderr(&user));
        let response = app.login_raw(&USER, "ada@example.com", PASSWORD).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let response = app.login_raw(&ADMIN, "grace@example.com", new_password).await;
        assert_eq!(response.status(), StatusCode::CREATED);
    }

    async fn cli_admins_reset_mfa_removes_the_factor_and_ends_the_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let env = app_env(&app);
        let (admin_id, creds) = app.admin_session("grace@example.com").await;
        let (_, other_admin) = app.admin_session("other@example.com").await;
        crate::admin_totp::enrol(&app, &creds).await;
        let needs_code = app.login_raw(&ADMIN, "grace@example.com", PASSWORD).await;
        assert_error(needs_code, StatusCode::UNAUTHORIZED, "mfa_required").await;

        let output = careers_api(&env, &["admins", "reset-mfa", "--email", " Grace@Example.com "]);
        assert!(output.status.success(), "{}", stderr(&output));
        // The admin is told, through the outbox the server delivers (CONTRACT §17).
        let notice = "SELECT COUNT(*) FROM mail_outbox WHERE recipient = 'grace@example.com' \
                      AND subject = 'Your second factor was removed'";
        assert_eq!(crate::data_layer::scalar(&app, notice).await, "1");
        assert!(String::from_utf8_lossy(&output.stdout).contains("second factor removed"));
        if backend == Backend::PostgresRedis {
            assert!(String::from_utf8_lossy(&output.stdout).contains("1 admin sessions ended"));
            assert_error(app.read(&creds, admin_id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
            assert!(app.record(&other_admin).await.is_some(), "another admin's session stays");
        } else {
            assert!(stderr(&output).contains("in-memory token store"), "{}", stderr(&output));
        }
        // The factor is gone: the password alone logs in (and the admin may enrol again).
        let response = app.login_raw(&ADMIN, "grace@example.com", PASSWORD).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let confirmed = crate::data_layer::scalar(
            &app,
            &format!("SELECT COUNT(*) FROM identities_admins WHERE id = {admin_id} AND totp_secret IS NULL"),
        )
        .await;
        assert_eq!(confirmed, "1");
        // Only admins.
        app.create_user("ada@example.com").await;
        let user = careers_api(&env, &["admins", "reset-mfa", "--email", "ada@example.com"]);
        assert!(!user.status.success());
        assert!(stderr(&user).contains("no admin"), "{}", stderr(&user));
    }

    async fn cli_flush_ends_one_contexts_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        let (admin_id, admin) = app.admin_session("grace@example.com").await;
        let output = careers_api(&app_env(&app), &["sessions", "flush", "--context", "admin"]);
        if backend == Backend::SqliteMemoryStore {
            // The in-memory store lives in the server process: the CLI says so and fails.
            assert!(!output.status.success());
            assert!(String::from_utf8_lossy(&output.stderr).contains("REDIS_URL"));
            return;
        }
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stdout).contains("1 admin sessions ended"));
        assert_error(app.read(&admin, admin_id).await, StatusCode::UNAUTHORIZED, "session_ended").await;
        assert_eq!(app.read(&user, user_id).await.status(), StatusCode::OK);
    }
}

#[test]
fn password_and_password_stdin_together_or_neither_is_a_usage_error() {
    // clap answers before the configuration or the database is read: exit 2, usage on stderr.
    let env = pairs(&[("DATABASE_URL", "sqlite::memory:")]);
    let user = "--first-name X --last-name Y";
    let cases = [
        (
            format!("admins create --email x@example.com --password {PASSWORD} --password-stdin"),
            "cannot be used with",
        ),
        (
            format!(
                "users create --email x@example.com --password {PASSWORD} --password-stdin {user}"
            ),
            "cannot be used with",
        ),
        (
            "admins create --email x@example.com".to_string(),
            "required",
        ),
        (
            format!("users create --email x@example.com {user}"),
            "required",
        ),
        // set-password reads standard input only.
        (
            format!("admins set-password --email x@example.com --password {PASSWORD}"),
            "unexpected argument",
        ),
    ];
    for (command, needle) in &cases {
        let args: Vec<&str> = command.split_whitespace().collect();
        let output = careers_api_stdin(&env, &args, &format!("{PASSWORD}\n"));
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains(needle), "{command}: {stderr}");
        assert!(output.stdout.is_empty(), "{command}");
    }
}

#[test]
fn misconfiguration_is_one_line_on_stderr_and_a_nonzero_exit() {
    let secret = ("JWT_SIGNING_SECRET", SECRET);
    let redis = ("REDIS_URL", "redis://127.0.0.1:6379");
    let domain = ("COOKIE_DOMAIN", ".example.com");
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("APP_ENV", "production"), secret, domain], "REDIS_URL"),
        (vec![("APP_ENV", "staging"), secret], "REDIS_URL"),
        (
            vec![("APP_ENV", "production"), redis, domain],
            "JWT_SIGNING_SECRET",
        ),
        (vec![("APP_ENV", "staging"), redis], "JWT_SIGNING_SECRET"),
        (
            vec![("APP_ENV", "production"), redis, secret],
            "COOKIE_DOMAIN",
        ),
        (vec![("APP_ENV", "qa"), secret], "COOKIE_DOMAIN"),
        (
            vec![("APP_ENV", "qa"), secret, ("COOKIE_DOMAIN", "example.com")],
            "COOKIE_DOMAIN",
        ),
        (vec![("JWT_SIGNING_SECRET", "too-short")], "32 bytes"),
        (vec![("COOKIE_PARTITIONED", "admin")], "COOKIE_PARTITIONED"),
    ];
    for (env, needle) in cases {
        let output = careers_api(&pairs(&env), &["serve"]);
        assert_eq!(output.status.code(), Some(2), "{env:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(needle), "{env:?}: {stderr}");
    }
}

const DEMO_TABLES: &[&str] = &[
    "identities_admins",
    "identities_users",
    "org_companies",
    "org_user_profiles",
    "careers_user_profiles",
    "careers_certificates",
    "careers_experiences",
    "careers_skills",
    "careers_jobs",
    "careers_job_applications",
];

async fn row_counts(app: &TestApp) -> Vec<i64> {
    use sea_orm::ConnectionTrait;
    let mut counts = Vec::new();
    for table in DEMO_TABLES {
        let backend = app.state.db.get_database_backend();
        let row = app
            .state
            .db
            .query_one_raw(sea_orm::Statement::from_string(
                backend,
                format!("SELECT COUNT(*) FROM {table}"),
            ))
            .await
            .unwrap()
            .unwrap();
        counts.push(row.try_get_by_index::<i64>(0).unwrap());
    }
    counts
}

mod seed {
    use super::*;

    backend_tests! {
        async fn seed_demo_loads_the_contract_data_set_once(backend) {
            let app = TestApp::spawn(backend).await;
            let env = app_env(&app);
            let first = careers_api(&env, &["seed", "--demo"]);
            assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
            let counts = row_counts(&app).await;
            // admins, users, companies, org profiles, talent profiles, certificates, experiences,
            // skills, jobs, applications
            assert_eq!(counts, vec![1, 5, 2, 3, 1, 2, 2, 3, 5, 1]);
            let second = careers_api(&env, &["seed", "--demo"]);
            assert!(second.status.success());
            assert!(String::from_utf8_lossy(&second.stdout).contains("0 rows created"));
            assert_eq!(row_counts(&app).await, counts, "idempotent");

            let logins = [
                (ADMIN, "admin@example.com", "admin-password-1"),
                (USER, "employer@acme.example", "employer-password-1"),
                (USER, "employer@globex.example", "employer-password-1"),
                (USER, "candidate@example.com", "candidate-password-1"),
                (USER, "plain@example.com", "plain-password-1"),
                (USER, "recruiter@acme.example", "recruiter-password-1"),
            ];
            for (ctx, email, password) in logins {
                let response = app.login_raw(&ctx, email, password).await;
                assert_eq!(response.status(), StatusCode::CREATED, "{email}");
            }
            // The demo employers own their companies; the recruiter is Acme's member.
            for (email, company, role) in [
                ("employer@acme.example", "Acme", "owner"),
                ("employer@globex.example", "Globex", "owner"),
                ("recruiter@acme.example", "Acme", "member"),
            ] {
                let sql = format!(
                    "SELECT op.role || ' ' || c.name FROM org_user_profiles op \
                     JOIN identities_users u ON u.id = op.identities_user_id \
                     JOIN org_companies c ON c.id = op.company_id WHERE u.email = '{email}'"
                );
                assert_eq!(crate::data_layer::scalar(&app, &sql).await, format!("{role} {company}"));
            }
            let unverified = crate::data_layer::scalar(
                &app,
                "SELECT COUNT(*) FROM identities_users WHERE email_verified_at IS NULL",
            )
            .await;
            assert_eq!(unverified, "0", "every demo user is verified");
            // Each company has at least two open jobs on the marketplace.
            let jobs: serde_json::Value = app
                .request(reqwest::Method::GET, "/marketplace/careers/jobs")
                .send().await.unwrap().json().await.unwrap();
            for company in ["Acme", "Globex"] {
                let open_jobs = jobs["careers_jobs"].as_array().unwrap().iter()
                    .filter(|j| j["company"]["name"] == company).count();
                assert!(open_jobs >= 2, "{company}: {open_jobs}");
            }
            // With their places, types and salaries; remote and on-site ones among them.
            let open = jobs["careers_jobs"].as_array().unwrap();
            for job in open {
                assert_eq!(job["status"], "open", "{job}");
                assert!(job["employment_type"].is_string() && job["salary_currency"].is_string(), "{job}");
                assert!(job["country_code"].is_string() || job["workplace_type"] == "remote", "{job}");
            }
            for place in ["remote", "on_site"] {
                assert!(open.iter().any(|j| j["workplace_type"] == place), "{place}");
            }
        }
    }
}

#[test]
fn seed_refuses_outside_development_and_test() {
    let mut production = vec![
        ("APP_ENV", "production"),
        ("JWT_SIGNING_SECRET", SECRET),
        ("REDIS_URL", "redis://127.0.0.1:6379"),
        ("COOKIE_DOMAIN", ".example.com"),
        ("DATABASE_URL", "sqlite::memory:"),
    ];
    production.extend_from_slice(&PRODUCTION_STAND_INS);
    let env = pairs(&production);
    let output = careers_api(&env, &["seed", "--demo"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("development and test only"));
}
