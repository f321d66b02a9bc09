//! The nested items of a form (specification §4.5): array items with `id` update the record
//! of that id (or, with `_destroy: true`, remove it), items without create one. The talent
//! profile's certificates, experiences and skills are edited this way.

use sea_orm::{ActiveModelTrait, EntityTrait, ModelTrait};

use crate::db::{DataError, unique_violation};
use crate::forms::Errors;

/// A nested item: with `id` it updates (or, with `_destroy`, removes) an existing child;
/// without, it creates one, which needs its one required field.
pub trait NestedItem {
    fn id(&self) -> Option<i64>;
    fn destroy(&self) -> bool;
    /// The required field of a new item, and whether it is present.
    fn required_field(&self) -> (&'static str, bool);
}

/// Reports the required field of every new item of `items` (under `key`) that lacks it.
pub fn require_items<T: NestedItem>(errors: &mut Errors, key: &str, items: &Option<Vec<T>>) {
    for (index, item) in items.iter().flatten().enumerate() {
        if item.id().is_none() && !item.destroy() {
            let (field, present) = item.required_field();
            errors.require(&format!("{key}[{index}].{field}"), present);
        }
    }
}

/// A child entity of a talent profile.
pub trait ProfileChild: EntityTrait {
    fn profile_id(model: &Self::Model) -> i64;
}

/// Items with `id` update (or with `_destroy` remove) the profile's own child of that id; items
/// without create one. An id that is not the profile's own is a 422 on that item.
pub async fn sync_children<E, I>(
    txn: &sea_orm::DatabaseTransaction,
    profile_id: i64,
    key: &str,
    items: &[I],
    build: impl Fn(&I, Option<E::Model>) -> E::ActiveModel,
) -> Result<(), DataError>
where
    E: ProfileChild,
    E::Model: sea_orm::IntoActiveModel<E::ActiveModel> + ModelTrait<Entity = E> + Sync,
    E::ActiveModel: ActiveModelTrait<Entity = E> + sea_orm::ActiveModelBehavior + Send,
    <E::PrimaryKey as sea_orm::PrimaryKeyTrait>::ValueType: From<i64>,
    I: NestedItem,
{
    for (index, item) in items.iter().enumerate() {
        // `_destroy` on an item that names no existing child has nothing to remove.
        if item.destroy() && item.id().is_none() {
            continue;
        }
        let existing = match item.id() {
            Some(id) => Some(
                E::find_by_id(id)
                    .one(txn)
                    .await?
                    .filter(|m| E::profile_id(m) == profile_id)
                    .ok_or_else(|| {
                        DataError::invalid(format!("{key}[{index}].id"), "does not exist")
                    })?,
            ),
            None => None,
        };
        let result = match existing {
            Some(model) if item.destroy() => model.delete(txn).await.map(drop),
            existing => build(item, existing).save(txn).await.map(drop),
        };
        result.map_err(|e| {
            if unique_violation(&e) {
                DataError::Conflict(format!("{key}[{index}] duplicates an existing entry"))
            } else {
                e.into()
            }
        })?;
    }
    Ok(())
}
