//! Database entities, named after the specification's models (`Identities::User` is
//! `identities::user`, table `identities_users`; `Careers::JobApplication` is
//! `careers::job_application`). Responses never serialise these directly: see `views`.

pub mod careers;
pub mod country;
pub mod identities;
pub mod org;
