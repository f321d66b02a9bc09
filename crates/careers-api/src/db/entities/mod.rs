//! Database entities, named after the specification's models (`Identities::User` is
//! `identities::user`, table `identities_users`). Responses never serialise these directly.

pub mod country;
pub mod identities;
