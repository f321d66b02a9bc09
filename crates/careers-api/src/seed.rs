//! The demo data set of CONTRACT §7. Idempotent: every row is looked up by its natural key
//! (e-mail, company name, job title...) and created only when missing, so a second run changes
//! nothing.

use std::sync::Arc;

use chrono::{NaiveDate, Utc};
use sea_orm::{
    ActiveModelBehavior, ActiveModelTrait, ColumnTrait, DatabaseConnection, DatabaseTransaction,
    EntityTrait, IntoActiveModel, QueryFilter, Select, Set, TransactionTrait,
};

use crate::error::ApiError;
use crate::mfa::SecretBox;
use crate::models::careers::job_application::{self, entity as job_application_entity};
use crate::models::careers::{
    certificate::entity as certificate, experience::entity as experience, job::entity as job,
    skill::entity as skill, user_profile::entity as talent_profile,
};
use crate::models::identities::admin::{self, entity as admin_entity};
use crate::models::identities::user::{self, entity as user_entity};
use crate::models::org::Role;
use crate::models::org::{company::entity as company, user_profile::entity as org_profile};
use crate::password::Passwords;

struct DemoUser {
    email: &'static str,
    password: &'static str,
    first_name: &'static str,
    last_name: &'static str,
}

const ADMIN: DemoUser = DemoUser {
    email: "admin@example.com",
    password: "admin-password-1",
    first_name: "Ada",
    last_name: "Admin",
};
const ACME_EMPLOYER: DemoUser = DemoUser {
    email: "employer@acme.example",
    password: "employer-password-1",
    first_name: "Erin",
    last_name: "Acme",
};
const GLOBEX_EMPLOYER: DemoUser = DemoUser {
    email: "employer@globex.example",
    password: "employer-password-1",
    first_name: "Gabe",
    last_name: "Globex",
};
const CANDIDATE: DemoUser = DemoUser {
    email: "candidate@example.com",
    password: "candidate-password-1",
    first_name: "Cara",
    last_name: "Candidate",
};
const PLAIN: DemoUser = DemoUser {
    email: "plain@example.com",
    password: "plain-password-1",
    first_name: "Pat",
    last_name: "Plain",
};

const ACME_RECRUITER: DemoUser = DemoUser {
    email: "recruiter@acme.example",
    password: "recruiter-password-1",
    first_name: "Remy",
    last_name: "Recruiter",
};

/// A demo job (CONTRACT §7: Acme and Globex each have at least two open jobs, with their
/// places, types and salaries, remote and on-site ones among them).
struct DemoJob {
    company: &'static str,
    title: &'static str,
    open: bool,
    department: &'static str,
    employment_type: &'static str,
    workplace_type: &'static str,
    /// (country, region, locality); the country alone for a remote job.
    place: (
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
    ),
    /// (min, max, currency, interval)
    salary: Option<(i64, i64, &'static str, &'static str)>,
}

const JOBS: &[DemoJob] = &[
    DemoJob {
        company: "Acme",
        title: "Senior Rust Engineer",
        open: true,
        department: "Engineering",
        employment_type: "full_time",
        workplace_type: "hybrid",
        place: (Some("DE"), Some("Berlin"), Some("Berlin")),
        salary: Some((75_000, 95_000, "EUR", "year")),
    },
    DemoJob {
        company: "Acme",
        title: "Platform Engineer",
        open: true,
        department: "Engineering",
        employment_type: "full_time",
        workplace_type: "remote",
        place: (Some("DE"), None, None),
        salary: Some((70_000, 90_000, "EUR", "year")),
    },
    DemoJob {
        company: "Acme",
        title: "Office Manager",
        open: false,
        department: "Operations",
        employment_type: "part_time",
        workplace_type: "on_site",
        place: (Some("DE"), Some("Bavaria"), Some("Munich")),
        salary: None,
    },
    DemoJob {
        company: "Globex",
        title: "Data Analyst",
        open: true,
        department: "Analytics",
        employment_type: "full_time",
        workplace_type: "on_site",
        place: (Some("US"), Some("Oregon"), Some("Springfield")),
        salary: Some((85_000, 110_000, "USD", "year")),
    },
    DemoJob {
        company: "Globex",
        title: "Product Designer",
        open: true,
        department: "Design",
        employment_type: "contractor",
        workplace_type: "remote",
        place: (None, None, None),
        salary: Some((60, 90, "USD", "hour")),
    },
];

fn date(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d)
}

/// The row `existing` finds, or the one `create` inserts (counted in `created`).
async fn ensure<E, A>(
    txn: &DatabaseTransaction,
    existing: Select<E>,
    create: impl FnOnce() -> A,
    created: &mut u64,
) -> Result<E::Model, ApiError>
where
    E: EntityTrait,
    E::Model: IntoActiveModel<A>,
    A: ActiveModelTrait<Entity = E> + ActiveModelBehavior + Send,
{
    if let Some(found) = existing.one(txn).await? {
        return Ok(found);
    }
    *created += 1;
    Ok(create().insert(txn).await?)
}

/// Loads the demo data set; returns how many rows it created (0 on a second run).
pub async fn demo(db: &DatabaseConnection, passwords: &Arc<Passwords>) -> Result<u64, ApiError> {
    // Hash outside the transaction, and only for accounts that do not exist yet.
    let mut digests = Vec::new();
    for account in [
        &ADMIN,
        &ACME_EMPLOYER,
        &GLOBEX_EMPLOYER,
        &CANDIDATE,
        &PLAIN,
        &ACME_RECRUITER,
    ] {
        let exists = if account.email == ADMIN.email {
            admin::find_admin_by_email(db, account.email)
                .await?
                .is_some()
        } else {
            user::find_user_by_email(db, account.email).await?.is_some()
        };
        digests.push(if exists {
            String::new()
        } else {
            passwords.hash(account.password.into()).await?
        });
    }

    let txn = db.begin().await?;
    let now = Utc::now();
    let mut created = 0u64;
    let mut digests = digests.into_iter();

    let admin_digest = digests.next().unwrap_or_default();
    ensure(
        &txn,
        admin_entity::Entity::find().filter(admin_entity::Column::Email.eq(ADMIN.email)),
        || admin_entity::ActiveModel {
            email: Set(ADMIN.email.into()),
            password_digest: Set(admin_digest),
            first_name: Set(ADMIN.first_name.into()),
            last_name: Set(ADMIN.last_name.into()),
            created_at: Set(now),
            updated_at: Set(now),
            ..Default::default()
        },
        &mut created,
    )
    .await?;

    let mut user_ids = Vec::new();
    for (account, digest) in [
        &ACME_EMPLOYER,
        &GLOBEX_EMPLOYER,
        &CANDIDATE,
        &PLAIN,
        &ACME_RECRUITER,
    ]
    .into_iter()
    .zip(digests)
    {
        let user = ensure(
            &txn,
            user_entity::Entity::find().filter(user_entity::Column::Email.eq(account.email)),
            || user_entity::ActiveModel {
                country_id: Set(1),
                email: Set(account.email.into()),
                password_digest: Set(digest),
                first_name: Set(account.first_name.into()),
                last_name: Set(account.last_name.into()),
                phone_code: Set("+1".into()),
                mobile: Set("5550100".into()),
                created_at: Set(now),
                updated_at: Set(now),
                // The demo's users are verified (CONTRACT §7, §14).
                email_verified_at: Set(Some(now)),
                ..Default::default()
            },
            &mut created,
        )
        .await?;
        user_ids.push(user.id);
    }
    let [
        acme_employer,
        globex_employer,
        candidate,
        _plain,
        acme_recruiter,
    ] = user_ids[..]
    else {
        return Err(ApiError::Internal);
    };

    let mut companies = Vec::new();
    for name in ["Acme", "Globex"] {
        let company = ensure(
            &txn,
            company::Entity::find().filter(company::Column::Name.eq(name)),
            || company::ActiveModel {
                name: Set(name.into()),
                slug: Set(crate::forms::derive_slug(name)),
                website: Set(Some(format!("https://{}.example", name.to_lowercase()))),
                suspended_at: Set(None),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            },
            &mut created,
        )
        .await?;
        companies.push((name, company.id));
    }
    let company_id = |name: &str| {
        companies
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, id)| *id)
            .unwrap_or_default()
    };

    // The demo employers own their companies; the recruiter is a member (CONTRACT §7).
    for (user_id, company, title, role) in [
        (acme_employer, "Acme", "Head of Talent", Role::Owner),
        (globex_employer, "Globex", "Recruiter", Role::Owner),
        (acme_recruiter, "Acme", "Recruiter", Role::Member),
    ] {
        ensure(
            &txn,
            org_profile::Entity::find().filter(org_profile::Column::IdentitiesUserId.eq(user_id)),
            || org_profile::ActiveModel {
                identities_user_id: Set(user_id),
                company_id: Set(company_id(company)),
                title: Set(title.into()),
                role: Set(role.as_str().into()),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            },
            &mut created,
        )
        .await?;
    }

    let mut job_ids = Vec::new();
    for demo in JOBS {
        let (company, title) = (company_id(demo.company), &demo.title);
        let description = format!("{title}: join us and build the future of hiring.");
        let search =
            crate::models::careers::job::search_text(title, &description, Some(demo.department));
        let job = ensure(
            &txn,
            job::Entity::find()
                .filter(job::Column::CompanyId.eq(company))
                .filter(job::Column::Title.eq(*title)),
            || job::ActiveModel {
                company_id: Set(company),
                title: Set((*title).into()),
                description: Set(description.clone()),
                status: Set(if demo.open { "open" } else { "draft" }.into()),
                department: Set(Some(demo.department.into())),
                employment_type: Set(Some(demo.employment_type.into())),
                workplace_type: Set(demo.workplace_type.into()),
                country_code: Set(demo.place.0.map(Into::into)),
                region: Set(demo.place.1.map(Into::into)),
                locality: Set(demo.place.2.map(Into::into)),
                salary_min: Set(demo.salary.map(|s| s.0)),
                salary_max: Set(demo.salary.map(|s| s.1)),
                salary_currency: Set(demo.salary.map(|s| s.2.into())),
                salary_interval: Set(demo.salary.map(|s| s.3.into())),
                valid_through: Set(None),
                published_at: Set(demo.open.then_some(now)),
                moderated_at: Set(None),
                search_title: Set(search.0.clone()),
                search_body: Set(search.1.clone()),
                search_company: Set(crate::forms::fold_text(demo.company)),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            },
            &mut created,
        )
        .await?;
        crate::models::careers::job_stage::write_stages(&txn, job.id, None, now).await?;
        job_ids.push((job.id, company));
    }

    let profile_id = ensure(
        &txn,
        talent_profile::Entity::find()
            .filter(talent_profile::Column::IdentitiesUserId.eq(candidate)),
        || talent_profile::ActiveModel {
            identities_user_id: Set(candidate),
            headline: Set("Backend engineer who likes typed systems".into()),
            created_at: Set(now),
            updated_at: Set(now),
            ..Default::default()
        },
        &mut created,
    )
    .await?
    .id;

    for (name, issuer, issued_on) in [
        (
            "AWS Certified Developer",
            "Amazon Web Services",
            date(2023, 4, 12),
        ),
        (
            "Certified Kubernetes Administrator",
            "CNCF",
            date(2024, 2, 1),
        ),
    ] {
        ensure(
            &txn,
            certificate::Entity::find()
                .filter(certificate::Column::CareersUserProfileId.eq(profile_id))
                .filter(certificate::Column::Name.eq(name)),
            || certificate::ActiveModel {
                careers_user_profile_id: Set(profile_id),
                name: Set(name.into()),
                issuer: Set(Some(issuer.into())),
                issued_on: Set(issued_on),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            },
            &mut created,
        )
        .await?;
    }

    for (job_title, company_name, started_on, ended_on) in [
        (
            "Software Engineer",
            "Initech",
            date(2019, 3, 1),
            date(2022, 6, 30),
        ),
        ("Senior Backend Engineer", "Hooli", date(2022, 7, 1), None),
    ] {
        ensure(
            &txn,
            experience::Entity::find()
                .filter(experience::Column::CareersUserProfileId.eq(profile_id))
                .filter(experience::Column::JobTitle.eq(job_title)),
            || experience::ActiveModel {
                careers_user_profile_id: Set(profile_id),
                job_title: Set(job_title.into()),
                company_name: Set(Some(company_name.into())),
                started_on: Set(started_on),
                ended_on: Set(ended_on),
                description: Set(None),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            },
            &mut created,
        )
        .await?;
    }

    for name in ["Rust", "PostgreSQL", "Kubernetes"] {
        ensure(
            &txn,
            skill::Entity::find()
                .filter(skill::Column::CareersUserProfileId.eq(profile_id))
                .filter(skill::Column::Name.eq(name)),
            || skill::ActiveModel {
                careers_user_profile_id: Set(profile_id),
                name: Set(name.into()),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            },
            &mut created,
        )
        .await?;
    }

    let (applied_job, applied_company) = job_ids[0];
    let first_stage = job_application::first_stage(&txn, applied_job).await?;
    ensure(
        &txn,
        job_application_entity::Entity::find()
            .filter(job_application_entity::Column::CareersJobId.eq(applied_job))
            .filter(job_application_entity::Column::CareersUserProfileId.eq(profile_id)),
        || job_application_entity::ActiveModel {
            careers_job_id: Set(applied_job),
            company_id: Set(applied_company),
            careers_user_profile_id: Set(profile_id),
            status: Set(job_application::STATUS_ACTIVE.into()),
            cover_letter: Set("I would love to write Rust at Acme.".into()),
            created_at: Set(now),
            updated_at: Set(now),
            careers_job_stage_id: Set(first_stage),
            rejection_reason: Set(None),
            status_changed_at: Set(now),
            lock_version: Set(0),
            ..Default::default()
        },
        &mut created,
    )
    .await?;

    txn.commit().await?;
    Ok(created)
}

/// **Development only**: an admin whose second factor has a published secret, so that the
/// team dashboard's TOTP login can be tried with any authenticator app. Never in another
/// environment: anyone who reads this file can compute its codes.
pub const DEMO_MFA_ADMIN_EMAIL: &str = "mfa-admin@example.com";
pub const DEMO_MFA_ADMIN_PASSWORD: &str = "admin-password-1";
/// Base32, 160 bits (RFC 4226's example secret, "12345678901234567890").
pub const DEMO_MFA_TOTP_SECRET: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

/// Creates [`DEMO_MFA_ADMIN_EMAIL`] with its known TOTP secret, confirmed; 1 when created.
pub async fn demo_mfa_admin(
    db: &DatabaseConnection,
    passwords: &Arc<Passwords>,
    secrets: &SecretBox,
) -> Result<u64, ApiError> {
    if admin::find_admin_by_email(db, DEMO_MFA_ADMIN_EMAIL)
        .await?
        .is_some()
    {
        return Ok(0);
    }
    let digest = passwords.hash(DEMO_MFA_ADMIN_PASSWORD.into()).await?;
    let created = admin::create_admin(
        db,
        admin::NewAdmin {
            email: DEMO_MFA_ADMIN_EMAIL.into(),
            password_digest: digest,
            first_name: "Mfa".into(),
            last_name: "Demo".into(),
        },
    )
    .await?;
    let sealed = secrets.seal(created.id, b"12345678901234567890");
    admin::start_totp(db, created.id, sealed.clone(), false).await?;
    admin::confirm_totp(db, created.id, &sealed, 0, Vec::new(), Utc::now(), None).await?;
    Ok(1)
}
