//! The models of the specification, one home each: its entity (the table), its response
//! views, its forms and its queries. `identities::user` is `Identities::User`,
//! `careers::job_application` is `Careers::JobApplication`, and so on.
//!
//! A model's queries return [`DataError`](crate::db::DataError), never an HTTP error; its
//! forms validate into the contract's 422. Responses never serialise an entity: a view names
//! its columns, so a column such as `password_digest` cannot leak.

pub mod careers;
pub mod country;
pub mod identities;
pub mod org;
