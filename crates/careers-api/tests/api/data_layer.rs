//! One data layer for SQLite and PostgreSQL: constraints live in the database, not only in code.

use sea_orm::{ConnectionTrait, DatabaseBackend, Statement};
use sea_orm_migration::MigratorTrait;

use crate::backend_tests;
use crate::helpers::*;

pub(crate) async fn scalar(app: &TestApp, sql: &str) -> String {
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

/// Every value of every column of every table of the app's database, as text (the tests that
/// no secret is at rest read it all).
pub(crate) async fn every_value(app: &TestApp) -> Vec<String> {
    let db = &app.state.db;
    let backend = db.get_database_backend();
    let rows = |sql: String| async move {
        db.query_all_raw(Statement::from_string(backend, sql))
            .await
            .unwrap()
    };
    let columns_sql = match backend {
        sea_orm::DatabaseBackend::Sqlite => "SELECT m.name AS t, p.name AS c FROM sqlite_master m \
             JOIN pragma_table_info(m.name) p WHERE m.type = 'table'"
            .to_owned(),
        _ => {
            "SELECT table_name::text AS t, column_name::text AS c FROM information_schema.columns \
              WHERE table_schema = current_schema()"
                .to_owned()
        }
    };
    let mut values = Vec::new();
    for column in rows(columns_sql).await {
        let table: String = column.try_get("", "t").unwrap();
        let name: String = column.try_get("", "c").unwrap();
        let sql = format!("SELECT CAST(\"{name}\" AS TEXT) AS v FROM \"{table}\"");
        for row in rows(sql).await {
            if let Ok(Some(value)) = row.try_get::<Option<String>>("", "v") {
                values.push(value);
            }
        }
    }
    values
}

/// The job of the demo data's one application.
const JOB_OF_1: &str = "(SELECT careers_job_id FROM careers_job_applications WHERE id = 1)";

/// An application of profile 1 to `job`: under migration 2's schema, or, given its
/// `company_id`, under the latest (the company from migration 3 on, the pipeline's columns from
/// migration 13 on).
fn insert_application(job: i64, company: Option<&str>) -> String {
    let (columns, values) = company.map_or((String::new(), String::new()), |c| {
        (
            ", company_id, status_changed_at".to_owned(),
            format!(", {c}, CURRENT_TIMESTAMP"),
        )
    });
    let status = if company.is_some() {
        "active"
    } else {
        "submitted"
    };
    format!(
        "INSERT INTO careers_job_applications (careers_job_id, careers_user_profile_id, status, \
         cover_letter, created_at, updated_at{columns}) \
         VALUES ({job}, 1, '{status}', 'x', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP{values})"
    )
}

backend_tests! {
    async fn sqlite_runs_with_foreign_keys_wal_and_a_busy_timeout(backend) {
        let app = TestApp::spawn(backend).await;
        // The hot reads run inline on a SQLite file (DECISIONS 79), on the pool elsewhere.
        let sqlite = app.state.db.get_database_backend() == DatabaseBackend::Sqlite;
        assert_eq!(app.state.db.reads_inline(), sqlite);
        if !sqlite {
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
        // Every migration after 3 goes first (the thirteen from 16 down to 4), then 3.
        careers_api::db::Migrator::down(db, Some(14)).await.unwrap();
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

    async fn migrations_are_idempotent(backend) {
        let app = TestApp::spawn(backend).await;
        careers_api::db::migrate(&app.state.db).await.unwrap();
        assert_eq!(scalar(&app, "SELECT COUNT(*) FROM countries").await, "8");
    }
}
