//! The command line (CONTRACT §7) and start-up configuration checks (CONTRACT §1).

use std::process::{Command, Output};

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

    async fn cli_flush_ends_one_contexts_sessions(backend) {
        let app = TestApp::spawn(backend).await;
        let (user_id, user) = app.user_session("ada@example.com").await;
        let (admin_id, admin) = app.admin_session("grace@example.com").await;
        let output = careers_api(&app_env(&app), &["sessions", "flush", "--context", "admin"]);
        if backend == Backend::SqliteMemory {
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
