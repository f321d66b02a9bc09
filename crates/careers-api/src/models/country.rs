//! Countries: the reference list users point to (`country.id`).

pub mod entity;

use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use self::entity as country;
use crate::db::DataError;

pub async fn country_id_by_code(
    db: &DatabaseConnection,
    code: &str,
) -> Result<Option<i64>, DataError> {
    Ok(country::Entity::find()
        .filter(country::Column::Code.eq(code.to_ascii_uppercase()))
        .one(db)
        .await?
        .map(|c| c.id))
}
