//! `Careers::JobStage`: a job's ordered hiring stages (CONTRACT §16), edited as nested items of
//! the job's forms (specification §4.5) and judged on the form's final state: names unique
//! within the job (case aside), positions distinct positive integers, 1 to [`MAX_STAGES`]
//! stages, and no stage that holds an application destroyed.

pub mod entity;

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, ModelTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set,
};
use serde::{Deserialize, Serialize};

use self::entity as stage;
use super::job_application::entity as application;
use crate::db::DataError;
use crate::forms::Errors;

/// The stages a new job gets, at positions 1 to 4.
pub const DEFAULT_STAGES: [&str; 4] = ["Applied", "Screening", "Interview", "Offer"];

/// The most stages a job may have.
pub const MAX_STAGES: usize = 50;

/// The form's key of the stages.
const KEY: &str = "careers_job_stages";

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct StageView {
    pub id: i64,
    pub name: String,
    pub position: i32,
}

impl From<&stage::Model> for StageView {
    fn from(s: &stage::Model) -> Self {
        Self {
            id: s.id,
            name: s.name.clone(),
            position: s.position,
        }
    }
}

/// One item of `careers_job_stages`: with `id` it renames, moves or (with `_destroy`) removes
/// that stage of the job; without, it adds one, which needs `name` and `position`.
#[derive(Debug, Clone, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct StageItem {
    #[garde(skip)]
    pub id: Option<i64>,
    #[serde(rename = "_destroy")]
    #[garde(skip)]
    pub destroy: Option<bool>,
    /// 1 to 60 characters, unique within the job.
    #[garde(length(chars, min = 1, max = 60))]
    pub name: Option<String>,
    /// A positive integer, distinct within the job.
    #[garde(range(min = 1, max = 1_000_000))]
    pub position: Option<i32>,
}

/// Reports the required fields of every new item (`name`, `position`).
pub fn require_items(errors: &mut Errors, items: &Option<Vec<StageItem>>) {
    for (index, item) in items.iter().flatten().enumerate() {
        if item.id.is_none() && !item.destroy.unwrap_or(false) {
            errors.require(&format!("{KEY}[{index}].name"), item.name.is_some());
            errors.require(&format!("{KEY}[{index}].position"), item.position.is_some());
        }
    }
}

/// A stage of the form's final state: the stored one it is (if any), and the item that set it.
struct Planned {
    existing: Option<stage::Model>,
    name: String,
    position: i32,
    item: Option<usize>,
}

/// Writes the job's stages as `items` leave them (the defaults for a new job without items), in
/// the caller's transaction, which holds the job's row lock. The final state is judged before
/// anything is written: an unknown id, a duplicate name or position, or no stage left is a 422
/// on the item (or on `careers_job_stages`).
pub async fn write_stages<C: ConnectionTrait>(
    conn: &C,
    job_id: i64,
    items: Option<&[StageItem]>,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    let stored = stage::Entity::find()
        .filter(stage::Column::CareersJobId.eq(job_id))
        .all(conn)
        .await?;
    if stored.is_empty() && items.is_none() {
        for (position, name) in (1..).zip(DEFAULT_STAGES) {
            insert(conn, job_id, name, position, now).await?;
        }
        return Ok(());
    }
    let Some(items) = items else { return Ok(()) };
    let mut stored: HashMap<i64, stage::Model> = stored.into_iter().map(|s| (s.id, s)).collect();
    let mut plan: Vec<Planned> = Vec::new();
    let mut destroyed: Vec<(usize, stage::Model)> = Vec::new();
    let mut errors = Errors::default();
    for (index, item) in items.iter().enumerate() {
        let destroy = item.destroy.unwrap_or(false);
        match item.id {
            None if destroy => {}
            None => plan.push(Planned {
                existing: None,
                name: item.name.clone().unwrap_or_default(),
                position: item.position.unwrap_or_default(),
                item: Some(index),
            }),
            Some(id) => match stored.remove(&id) {
                None => errors.add(format!("{KEY}[{index}].id"), "is not a stage of this job"),
                Some(existing) if destroy => destroyed.push((index, existing)),
                Some(existing) => plan.push(Planned {
                    name: item.name.clone().unwrap_or_else(|| existing.name.clone()),
                    position: item.position.unwrap_or(existing.position),
                    existing: Some(existing),
                    item: Some(index),
                }),
            },
        }
    }
    // The stages no item named stay as they are; they come first, so that a clash is reported
    // on the item that makes it.
    let mut kept: Vec<Planned> = stored
        .into_values()
        .map(|existing| Planned {
            name: existing.name.clone(),
            position: existing.position,
            existing: Some(existing),
            item: None,
        })
        .collect();
    kept.sort_by_key(|p| p.position);
    kept.append(&mut plan);
    let plan = kept;
    if plan.is_empty() {
        errors.add(KEY, "a job keeps at least one stage");
    } else if plan.len() > MAX_STAGES {
        errors.add(KEY, format!("a job has at most {MAX_STAGES} stages"));
    }
    let (mut names, mut positions) = (HashSet::new(), HashSet::new());
    for planned in &plan {
        let at = |field: &str| format!("{KEY}[{}].{field}", planned.item.unwrap_or_default());
        if !names.insert(planned.name.to_lowercase()) {
            errors.add(
                at("name"),
                "is already the name of another stage of this job",
            );
        }
        if !positions.insert(planned.position) {
            errors.add(
                at("position"),
                "is already the position of another stage of this job",
            );
        }
    }
    // A stage that holds an application stays (the foreign key refuses it too).
    for (index, gone) in &destroyed {
        let holding = application::Entity::find()
            .filter(application::Column::CareersJobStageId.eq(gone.id))
            .count(conn)
            .await?;
        if holding > 0 {
            errors.add(
                format!("{KEY}[{index}].id"),
                "holds applications: move them to another stage first",
            );
        }
    }
    errors.finish()?;
    for (index, gone) in destroyed {
        // An application moved in since the check above: the foreign key refuses the delete
        // once that move commits, and the same 422 follows (the move won).
        gone.delete(conn).await.map_err(|e| {
            if crate::db::foreign_key_violation(&e) {
                DataError::invalid(
                    format!("{KEY}[{index}].id"),
                    "holds applications: move them to another stage first",
                )
            } else {
                e.into()
            }
        })?;
    }
    for planned in plan {
        match planned.existing {
            None => insert(conn, job_id, &planned.name, planned.position, now).await?,
            Some(existing)
                if existing.name != planned.name || existing.position != planned.position =>
            {
                let mut model: stage::ActiveModel = existing.into();
                model.name = Set(planned.name);
                model.position = Set(planned.position);
                model.updated_at = Set(now);
                model.update(conn).await?;
            }
            Some(_) => {}
        }
    }
    Ok(())
}

async fn insert<C: ConnectionTrait>(
    conn: &C,
    job_id: i64,
    name: &str,
    position: i32,
    now: DateTime<Utc>,
) -> Result<(), DataError> {
    stage::ActiveModel {
        careers_job_id: Set(job_id),
        name: Set(name.to_owned()),
        position: Set(position),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(conn)
    .await?;
    Ok(())
}

/// The job's stages in order (position, then id).
pub async fn stages_of<C: ConnectionTrait>(
    conn: &C,
    job_id: i64,
) -> Result<Vec<StageView>, DataError> {
    Ok(stage::Entity::find()
        .filter(stage::Column::CareersJobId.eq(job_id))
        .order_by_asc(stage::Column::Position)
        .order_by_asc(stage::Column::Id)
        .all(conn)
        .await?
        .iter()
        .map(StageView::from)
        .collect())
}
