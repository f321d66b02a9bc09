use serde::Serialize;

use crate::db::entities::identities::{admin, user};

/// `Identities::User` as specification §2.3 lists it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct UserView {
    pub id: i64,
    pub country_id: i64,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub phone_code: String,
    pub mobile: String,
}

impl From<&user::Model> for UserView {
    fn from(u: &user::Model) -> Self {
        Self {
            id: u.id,
            country_id: u.country_id,
            email: u.email.clone(),
            first_name: u.first_name.clone(),
            last_name: u.last_name.clone(),
            phone_code: u.phone_code.clone(),
            mobile: u.mobile.clone(),
        }
    }
}

/// `Identities::Admin` in the admin login body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AdminView {
    pub id: i64,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
}

impl From<&admin::Model> for AdminView {
    fn from(a: &admin::Model) -> Self {
        Self {
            id: a.id,
            email: a.email.clone(),
            first_name: a.first_name.clone(),
            last_name: a.last_name.clone(),
        }
    }
}
