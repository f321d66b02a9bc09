//! The oracle of the hot reads (`db/hot`, docs/ARCHITECTURE.md "The hot reads"): every hot
//! statement answers what its SeaORM equivalent answers, on both backends, over a data set with
//! several companies and jobs, multi-byte names, pages past the end, a user without an org
//! profile and ids that do not exist. A column added to a row in the wrong place, or a decoder
//! that drifts from its select list, fails here.

use careers_api::models::careers::job_application::{
    self, ApplicantBrief, ApplicationAttrs, ApplicationFilter, ApplicationStatus,
    EmployerApplicationItem, PipelineAttrs, entity as application,
};
use careers_api::models::careers::user_profile::entity as talent_profile;
use careers_api::models::identities::user::{self, UserBrief, UserView, entity as user_entity};
use careers_api::models::org::user_profile::{self as org_profile, entity as org_profile_entity};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::data_layer::scalar;
use crate::fixtures::*;
use crate::helpers::*;

/// Two companies with two jobs each, applications from five candidates (one with a multi-byte
/// name) spread over them; a user with no org profile. Answers (companies, jobs, user ids).
async fn data_set(app: &TestApp) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let acme = company(app, "Acme").await;
    let globex = company(app, "Globex").await;
    let jobs = vec![
        job(app, acme, "Rust Engineer", true).await,
        job(app, acme, "Office Manager", false).await,
        job(app, globex, "Data Analyst", true).await,
        job(app, globex, "Designer", true).await,
    ];
    let mut users = Vec::new();
    for n in 0..5 {
        let (user_id, profile_id) = silent_candidate(app, &format!("c{n}@example.com")).await;
        if n == 1 {
            rename_user(app, user_id, "Zoë ✓", "日本 \"quoted\"").await;
        }
        users.push(user_id);
        // Every candidate applies to some jobs: a company's list mixes its jobs.
        for (j, &job_id) in jobs.iter().enumerate() {
            if (n + j) % 3 != 0 {
                application(app, job_id, profile_id).await;
            }
        }
    }
    let (recruiter, _) = employer(app, "recruiter@acme.example", acme).await;
    users.push(recruiter);
    // A member of a suspended company: the employer check reads the role and the suspension.
    let initech = company(app, "Initech").await;
    let member = app.create_user("member@initech.example").await;
    org_profile_as(app, member, initech, "Analyst", "member").await;
    app.state
        .db
        .execute_unprepared(&format!(
            "UPDATE org_companies SET suspended_at = created_at WHERE id = {initech}"
        ))
        .await
        .unwrap();
    users.push(member);
    users.push(plain_user(app, "plain@example.com", "Plain", "User").await);
    (vec![acme, globex], jobs, users)
}

/// The employer's page as SeaORM reads it: the applications of `company_id` (and `job_id`) in
/// id order, each with its profile and user, and the total.
async fn seaorm_page(
    app: &TestApp,
    company_id: i64,
    filter: ApplicationFilter,
    page: u64,
    per_page: u64,
) -> (Value, u64) {
    let db = &*app.state.db;
    let mut query =
        application::Entity::find().filter(application::Column::CompanyId.eq(company_id));
    if let Some(job_id) = filter.job_id {
        query = query.filter(application::Column::CareersJobId.eq(job_id));
    }
    if let Some(stage_id) = filter.stage_id {
        query = query.filter(application::Column::CareersJobStageId.eq(stage_id));
    }
    if let Some(status) = filter.status {
        query = query.filter(application::Column::Status.eq(status.as_str()));
    }
    let total = query.clone().count(db).await.unwrap();
    let rows = query
        .order_by_asc(application::Column::Id)
        .offset((page - 1) * per_page)
        .limit(per_page)
        .all(db)
        .await
        .unwrap();
    let mut items = Vec::new();
    for a in &rows {
        let profile = talent_profile::Entity::find_by_id(a.careers_user_profile_id)
            .one(db)
            .await
            .unwrap()
            .unwrap();
        let person = user_entity::Entity::find_by_id(profile.identities_user_id)
            .one(db)
            .await
            .unwrap()
            .unwrap();
        items.push(
            serde_json::to_value(EmployerApplicationItem {
                application: ApplicationAttrs::from(a),
                pipeline: PipelineAttrs::from(a),
                career_user_profile: ApplicantBrief {
                    id: profile.id,
                    identities_user: UserBrief::from(&person),
                },
            })
            .unwrap(),
        );
    }
    (Value::Array(items), total)
}

backend_tests! {
    async fn the_hot_reads_answer_what_their_seaorm_equivalents_answer(backend) {
        let app = TestApp::spawn(backend).await;
        let (companies, jobs, users) = data_set(&app).await;
        let db = &app.state.db;
        let unknown = 1_000_000;

        // The session's user, and the user check of a refresh.
        for &id in users.iter().chain([&unknown]) {
            let hot = user::find_session_user(db, id).await.unwrap();
            let orm = user_entity::Entity::find_by_id(id).one(&**db).await.unwrap();
            assert_eq!(
                hot.map(|v| serde_json::to_value(v).unwrap()),
                orm.as_ref().map(|m| serde_json::to_value(UserView::from(m)).unwrap()),
                "session user {id}"
            );
            assert_eq!(user::user_exists(db, id).await.unwrap(), orm.is_some(), "user {id}");
        }

        // The employer check: no user, a user without an org profile, an employer.
        let mut employers = 0;
        for &id in users.iter().chain([&unknown]) {
            let hot = org_profile::employer(db, id)
                .await
                .unwrap()
                .map(|e| e.map(|e| (e.user_id, e.profile_id, e.company_id, e.role, e.suspended)));
            let person = user_entity::Entity::find_by_id(id).one(&**db).await.unwrap();
            let profile = org_profile_entity::Entity::find()
                .filter(org_profile_entity::Column::IdentitiesUserId.eq(id))
                .find_also_related(careers_api::models::org::company::entity::Entity)
                .one(&**db)
                .await
                .unwrap();
            let orm = person.map(|_| {
                profile.map(|(p, c)| {
                    let role = careers_api::models::org::Role::parse(&p.role);
                    let suspended = c.unwrap().suspended_at.is_some();
                    (id, p.id, p.company_id, role, suspended)
                })
            });
            employers += usize::from(matches!(orm, Some(Some(_))));
            assert_eq!(hot, orm, "employer check of user {id}");
        }
        assert_eq!(employers, 2);

        // The employer's pages: every company, without filters and with each kind of filter
        // (a job, a status, a stage, and all three), pages of several sizes up to one past the
        // last. Every third application is rejected, and the first moved to another stage.
        let all = application::Entity::find().all(&**db).await.unwrap();
        for a in all.iter().step_by(3) {
            db.execute_unprepared(&format!(
                "UPDATE careers_job_applications SET status = 'rejected', rejection_reason = 'other' \
                 WHERE id = {}", a.id)).await.unwrap();
        }
        let moved_to = scalar(&app, &format!(
            "SELECT MAX(id) FROM careers_job_stages WHERE careers_job_id = {}", all[0].careers_job_id)).await;
        let moved_to: i64 = moved_to.parse().unwrap();
        db.execute_unprepared(&format!(
            "UPDATE careers_job_applications SET careers_job_stage_id = {moved_to} WHERE id = {}", all[0].id))
            .await.unwrap();
        let mut filters = vec![ApplicationFilter::default()];
        filters.extend(jobs.iter().map(|&j| ApplicationFilter { job_id: Some(j), ..Default::default() }));
        filters.extend(ApplicationStatus::ALL.map(|s| ApplicationFilter { status: Some(s), ..Default::default() }));
        for stage_id in [moved_to, all[1].careers_job_stage_id.unwrap()] {
            filters.push(ApplicationFilter { stage_id: Some(stage_id), ..Default::default() });
        }
        filters.push(ApplicationFilter {
            job_id: Some(all[1].careers_job_id),
            status: Some(ApplicationStatus::Active),
            stage_id: all[1].careers_job_stage_id,
        });
        let mut seen_rows = 0;
        for &company_id in companies.iter().chain([&unknown]) {
            for &filter in &filters {
                for per_page in [1, 3, 25] {
                    for page in 1..=4 {
                        let rows = job_application::employer_applications(
                            db, company_id, filter, page, per_page,
                        )
                        .await
                        .unwrap();
                        let (items, total) = rows.page().unwrap();
                        let hot = serde_json::to_value(&items).unwrap();
                        let (orm, orm_total) =
                            seaorm_page(&app, company_id, filter, page, per_page).await;
                        assert_eq!(
                            (&hot, total),
                            (&orm, orm_total),
                            "company {company_id}, {filter:?}, page {page} of {per_page}"
                        );
                        seen_rows += items.len();
                    }
                }
            }
        }
        assert!(seen_rows > 50, "the pages held rows: {seen_rows}");

        // The employer's detail: every application, from its own company and from another.
        assert!(all.len() > 10);
        // Each company's whole list as SeaORM reads it, once.
        let mut expected = std::collections::HashMap::new();
        for &company_id in &companies {
            expected.insert(company_id, seaorm_page(&app, company_id, ApplicationFilter::default(), 1, 1000).await.0);
        }
        for a in &all {
            for &company_id in &companies {
                let hot = job_application::employer_application(db, company_id, a.id)
                    .await
                    .unwrap()
                    .map(|detail| serde_json::to_value(detail).unwrap());
                if a.company_id != company_id {
                    assert_eq!(hot, None, "application {} outside company {company_id}", a.id);
                    continue;
                }
                let hot = hot.expect("its own company's application");
                let item = expected[&company_id]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|item| item["id"] == json!(a.id))
                    .unwrap()
                    .clone();
                for key in ["id", "status", "cover_letter", "created_at", "updated_at"] {
                    assert_eq!(hot[key], item[key], "{key} of application {}", a.id);
                }
                assert_eq!(
                    hot["career_user_profile"]["id"],
                    item["career_user_profile"]["id"]
                );
                assert_eq!(
                    hot["career_user_profile"]["identities_user"],
                    item["career_user_profile"]["identities_user"]
                );
            }
        }
    }
}
