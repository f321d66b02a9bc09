//! One data layer for SQLite and PostgreSQL: constraints live in the database, not only in code.

use sea_orm::{ConnectionTrait, DatabaseBackend, Statement};

use crate::backend_tests;
use crate::helpers::*;

async fn scalar(app: &TestApp, sql: &str) -> String {
    let backend = app.state.db.get_database_backend();
    let row = app
        .state
        .db
        .query_one_raw(Statement::from_string(backend, sql))
        .await
        .unwrap()
        .unwrap();
    row.try_get_by_index::<i64>(0)
        .map(|v| v.to_string())
        .or_else(|_| row.try_get_by_index::<String>(0))
        .unwrap()
}

backend_tests! {
    async fn sqlite_runs_with_foreign_keys_wal_and_a_busy_timeout(backend) {
        let app = TestApp::spawn(backend).await;
        if app.state.db.get_database_backend() != DatabaseBackend::Sqlite {
            return;
        }
        assert_eq!(scalar(&app, "PRAGMA foreign_keys").await, "1");
        assert_eq!(scalar(&app, "PRAGMA journal_mode").await, "wal");
        assert_eq!(scalar(&app, "PRAGMA busy_timeout").await, "5000");
    }

    async fn the_database_enforces_case_insensitive_unique_emails(backend) {
        let app = TestApp::spawn(backend).await;
        app.create_user("ada@example.com").await;
        let db = &*app.state.db;
        let insert = "INSERT INTO identities_users \
            (country_id, email, password_digest, first_name, last_name, phone_code, mobile, created_at, updated_at) \
            VALUES (1, 'ADA@EXAMPLE.COM', 'x', 'a', 'b', 'c', 'd', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)";
        assert!(db.execute_unprepared(insert).await.is_err(), "duplicate e-mail in another case");
        let admin = "INSERT INTO identities_admins \
            (email, password_digest, first_name, last_name, created_at, updated_at) \
            VALUES ('Grace@Example.com', 'x', 'a', 'b', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)";
        db.execute_unprepared(admin).await.unwrap();
        assert!(db.execute_unprepared(&admin.replace("Grace@", "grace@")).await.is_err());
    }

    async fn the_database_enforces_foreign_keys(backend) {
        let app = TestApp::spawn(backend).await;
        let insert = "INSERT INTO identities_users \
            (country_id, email, password_digest, first_name, last_name, phone_code, mobile, created_at, updated_at) \
            VALUES (999, 'x@example.com', 'x', 'a', 'b', 'c', 'd', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)";
        assert!(app.state.db.execute_unprepared(insert).await.is_err());
    }

    async fn no_response_joins_more_than_three_tables(backend) {
        let app = TestApp::spawn(backend).await;
        careers_api::seed::demo(&app.state.db, &app.state.passwords).await.unwrap();
        let login = |ctx, email: &'static str, password: &'static str| {
            let app = &app;
            async move {
                let response = app.login_raw(&ctx, email, password).await;
                assert_eq!(response.status(), reqwest::StatusCode::CREATED, "{email}");
                Creds::from_response(&ctx, &response)
            }
        };
        use careers_api::areas::{ADMIN, USER};
        let employer = login(USER, "employer@acme.example", "employer-password-1").await;
        let candidate = login(USER, "candidate@example.com", "candidate-password-1").await;
        let admin = login(ADMIN, "admin@example.com", "admin-password-1").await;
        let start = app.sql_statements().len();
        let reads: [(&Creds, &str); 13] = [
            (&employer, "/org/user-profiles"),
            (&employer, "/org/user-profiles/1"),
            (&employer, "/org-user/careers/jobs"),
            (&employer, "/org-user/careers/job_applications"),
            (&employer, "/org-user/careers/job_applications/1"),
            (&candidate, "/candidate/careers/job_applications"),
            (&candidate, "/talent/careers/user_profile"),
            (&candidate, "/marketplace/careers/jobs"),
            (&candidate, "/marketplace/careers/jobs/1"),
            (&admin, "/admin-user/identities/users"),
            (&admin, "/admin-user/org/companies"),
            (&admin, "/admin-user/org/user-profiles"),
            (&admin, "/admin-user/org/user-profiles/1"),
        ];
        for (creds, path) in reads {
            let response = creds
                .with_cookies(app.request(reqwest::Method::GET, path))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), reqwest::StatusCode::OK, "{path}");
        }
        let statements = app.sql_statements()[start..].to_vec();
        assert!(statements.len() >= 13);
        for sql in statements {
            let joins = sql.to_uppercase().matches(" JOIN ").count();
            assert!(joins <= 2, "{joins} joins (more than three tables): {sql}");
        }
    }

    async fn migrations_are_idempotent(backend) {
        let app = TestApp::spawn(backend).await;
        careers_api::db::migrate(&app.state.db).await.unwrap();
        assert_eq!(scalar(&app, "SELECT COUNT(*) FROM countries").await, "8");
    }
}
