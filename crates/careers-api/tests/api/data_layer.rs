//! One data layer for SQLite and PostgreSQL: constraints live in the database, not only in code.

use sea_orm::{ConnectionTrait, DatabaseBackend, Statement, TransactionTrait};
use sea_orm_migration::MigratorTrait;

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

/// The job of the demo data's one application.
const JOB_OF_1: &str = "(SELECT careers_job_id FROM careers_job_applications WHERE id = 1)";

/// An application of profile 1 to `job`, with `company_id` when given (the column exists from
/// migration 3 on).
fn insert_application(job: i64, company: Option<&str>) -> String {
    let (column, value) = company.map_or((String::new(), String::new()), |c| {
        (", company_id".to_owned(), format!(", {c}"))
    });
    format!(
        "INSERT INTO careers_job_applications (careers_job_id, careers_user_profile_id, status, \
         cover_letter, created_at, updated_at{column}) \
         VALUES ({job}, 1, 'submitted', 'x', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP{value})"
    )
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

    async fn an_application_stays_in_its_jobs_company(backend) {
        let app = TestApp::spawn(backend).await;
        careers_api::seed::demo(&app.state.db, &app.state.passwords).await.unwrap();
        let db = &*app.state.db;
        let own = scalar(&app, &format!("SELECT company_id FROM careers_jobs WHERE id = {JOB_OF_1}")).await;
        assert_eq!(scalar(&app, "SELECT company_id FROM careers_job_applications WHERE id = 1").await, own);
        let other = scalar(&app, &format!("SELECT MIN(id) FROM org_companies WHERE id <> {own}")).await;
        let moved = format!("UPDATE careers_job_applications SET company_id = {other} WHERE id = 1");
        assert!(db.execute_unprepared(&moved).await.is_err(), "another company than the job's");
        // A job given to another company takes its applications along.
        db.execute_unprepared(&format!("UPDATE careers_jobs SET company_id = {other} WHERE id = {JOB_OF_1}"))
            .await
            .unwrap();
        assert_eq!(scalar(&app, "SELECT company_id FROM careers_job_applications WHERE id = 1").await, other);
    }

    async fn the_application_company_migration_fills_the_column_and_reverts(backend) {
        let app = TestApp::spawn(backend).await;
        careers_api::seed::demo(&app.state.db, &app.state.passwords).await.unwrap();
        let db = &*app.state.db;
        careers_api::db::Migrator::down(db, Some(1)).await.unwrap();
        let company_of_1 = "SELECT company_id FROM careers_job_applications WHERE id = 1";
        let backend = db.get_database_backend();
        assert!(db.query_one_raw(Statement::from_string(backend, company_of_1)).await.is_err(), "down drops the column");
        // Rows written under the old schema; the highest id is then deleted, and must not be
        // handed out again after the rebuild.
        let second_job = scalar(&app, &format!("SELECT MIN(id) FROM careers_jobs WHERE id <> {JOB_OF_1}")).await;
        let second_job: i64 = second_job.parse().unwrap();
        db.execute_unprepared(&insert_application(second_job, None)).await.unwrap();
        assert_eq!(scalar(&app, "SELECT MAX(id) FROM careers_job_applications").await, "2");
        db.execute_unprepared("DELETE FROM careers_job_applications WHERE id = 2").await.unwrap();

        careers_api::db::migrate(db).await.unwrap();
        let job_company = scalar(&app, &format!("SELECT company_id FROM careers_jobs WHERE id = {JOB_OF_1}")).await;
        assert_eq!(scalar(&app, company_of_1).await, job_company, "filled from the job");
        let second_company = scalar(&app, &format!("SELECT company_id FROM careers_jobs WHERE id = {second_job}")).await;
        db.execute_unprepared(&insert_application(second_job, Some(&second_company))).await.unwrap();
        assert_eq!(scalar(&app, "SELECT MAX(id) FROM careers_job_applications").await, "3", "id counter kept");
        assert_eq!(scalar(&app, "SELECT COUNT(*) FROM careers_job_applications").await, "2");
    }

    async fn an_employers_application_page_walks_the_company_index(backend) {
        // The page statement reads the company's applications in id order from the
        // (company_id, id) index and stops after the page, rather than collecting and sorting
        // all of them (docs/PERFORMANCE.md, session 6). PostgreSQL plans against its sizes, so
        // its scans that read a whole table or index range before the first row (sequential,
        // bitmap) and its sorts are turned off: with a company of many applications and a page
        // of 25 it chooses so by cost; only an ordered index can then serve the page.
        let app = TestApp::spawn(backend).await;
        careers_api::seed::demo(&app.state.db, &app.state.passwords).await.unwrap();
        let employer = app.login_raw(&careers_api::areas::USER, "employer@acme.example", "employer-password-1").await;
        let employer = Creds::from_response(&careers_api::areas::USER, &employer);
        let start = app.sql_statements().len();
        let response = employer
            .with_cookies(app.request(reqwest::Method::GET, "/org-user/careers/job_applications"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), reqwest::StatusCode::OK);
        let statements = app.sql_statements()[start..].to_vec();
        let page = statements.iter().find(|sql| sql.contains(" LIMIT ")).expect("the page statement");
        // `$1` is the employer's company.
        let company_id = scalar(&app, "SELECT op.company_id FROM org_user_profiles op \
            INNER JOIN identities_users u ON u.id = op.identities_user_id \
            WHERE u.email = 'employer@acme.example'").await;
        let page = page.replace("$1", &company_id).replace("$2", "25").replace("$3", "0");
        let db = &*app.state.db;
        let backend = db.get_database_backend();
        let plan: Vec<String> = if backend == DatabaseBackend::Sqlite {
            db.query_all_raw(Statement::from_string(backend, format!("EXPLAIN QUERY PLAN {page}")))
                .await
                .unwrap()
                .iter()
                .map(|row| row.try_get_by_index::<String>(3).unwrap())
                .collect()
        } else {
            let txn = db.begin().await.unwrap();
            for setting in ["enable_seqscan", "enable_bitmapscan", "enable_sort"] {
                txn.execute_unprepared(&format!("SET LOCAL {setting} = off")).await.unwrap();
            }
            let rows = txn.query_all_raw(Statement::from_string(backend, format!("EXPLAIN {page}"))).await.unwrap();
            rows.iter().map(|row| row.try_get_by_index::<String>(0).unwrap()).collect()
        };
        // The page's own scan of `a` (the total's is a second one, `a_1` on PostgreSQL).
        let page_scan = if backend == DatabaseBackend::Sqlite {
            "SEARCH a USING INDEX careers_job_applications_company_id "
        } else {
            "Index Scan using careers_job_applications_company_id on careers_job_applications a "
        };
        assert!(plan.iter().any(|line| line.contains(page_scan)), "{plan:#?}");
        assert!(!plan.iter().any(|line| line.contains("TEMP B-TREE") || line.contains("Sort")), "{plan:#?}");
    }

    async fn migrations_are_idempotent(backend) {
        let app = TestApp::spawn(backend).await;
        careers_api::db::migrate(&app.state.db).await.unwrap();
        assert_eq!(scalar(&app, "SELECT COUNT(*) FROM countries").await, "8");
    }
}
