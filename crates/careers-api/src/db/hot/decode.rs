//! Decoding a hot read's row: the same Rust type from every backend, by the drivers' own
//! decoders (rusqlite's `FromSql`, sqlx's `Decode`), column by column in select-list order.
//! [`hot_row!`](crate::db::hot_row) declares a row's columns and its decoder in one place.

use chrono::{DateTime, Utc};
use rusqlite::types::{FromSql, ValueRef};
use sea_orm::sqlx::postgres::PgRow;
use sea_orm::sqlx::sqlite::SqliteRow;
use sea_orm::sqlx::{self, Decode, Postgres, Row, Sqlite, Type};
use sea_orm::{DbErr, QueryResult, RuntimeErr};

/// Why a column could not be decoded into its Rust type.
pub type DecodeError = Box<dyn std::error::Error + Send + Sync>;

/// The `DbErr` of a failed inline SQLite statement or of a value that does not decode.
pub(super) fn read_failed(error: impl std::fmt::Display) -> DbErr {
    DbErr::Query(RuntimeErr::Internal(error.to_string()))
}

/// A value a hot read decodes: the same Rust type from every backend, by the drivers' own
/// decoders (rusqlite's `FromSql`, sqlx's `Decode`). `'r` is the row's borrow, which a
/// `&'r str` keeps.
pub trait HotValue<'r>: Sized {
    fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError>;
    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError>;
    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError>;
}

/// Owned values: rusqlite's `FromSql`, and sqlx's `Decode` on SQLite in memory and PostgreSQL.
macro_rules! owned {
    ($($ty:ty),*) => {$(
        impl<'r> HotValue<'r> for $ty {
            fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
                Ok(<$ty as FromSql>::column_result(value)?)
            }

            fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError> {
                Ok(row.try_get(index)?)
            }

            fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError> {
                Ok(row.try_get(index)?)
            }
        }
    )*};
}

owned!(i64, Option<i64>, String, Option<String>);

/// A timestamp: sqlx writes a `DateTime<Utc>` to SQLite as RFC 3339 text, which chrono's RFC 3339
/// parser reads (as sqlx's own decoder does) without the format-string machinery of rusqlite's
/// `FromSql`, which was a tenth of the employer list's CPU; any other text or type goes to
/// rusqlite's decoder.
impl<'r> HotValue<'r> for DateTime<Utc> {
    fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
        if let ValueRef::Text(text) = value
            && let Ok(time) = std::str::from_utf8(text)
                .map_err(drop)
                .and_then(|text| DateTime::parse_from_rfc3339(text).map_err(drop))
        {
            return Ok(time.to_utc());
        }
        Ok(<DateTime<Utc> as FromSql>::column_result(value)?)
    }

    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError> {
        Ok(row.try_get(index)?)
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError> {
        Ok(row.try_get(index)?)
    }
}

/// Text borrowed from the row.
impl<'r> HotValue<'r> for &'r str {
    fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
        Ok(value.as_str()?)
    }

    fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError> {
        decode_str::<Sqlite, _>(row, index)
    }

    fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError> {
        decode_str::<Postgres, _>(row, index)
    }
}

fn decode_str<'r, DB, R>(row: &'r R, index: usize) -> Result<&'r str, DecodeError>
where
    DB: sqlx::Database,
    R: Row<Database = DB>,
    &'r str: Decode<'r, DB> + Type<DB>,
    usize: sqlx::ColumnIndex<R>,
{
    Ok(row.try_get(index)?)
}

/// A row of any of the three, borrowed for `'r`: what is decoded from it may keep that borrow.
pub trait HotRow<'r>: Copy {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError>;
}

impl<'r> HotRow<'r> for &'r rusqlite::Row<'_> {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        T::inline(self.get_ref(index)?)
    }
}

impl<'r> HotRow<'r> for &'r SqliteRow {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        T::sqlite(self, index)
    }
}

impl<'r> HotRow<'r> for &'r PgRow {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        T::postgres(self, index)
    }
}

/// A row SeaORM read: the driver's row inside it.
impl<'r> HotRow<'r> for &'r QueryResult {
    fn get<T: HotValue<'r>>(self, index: usize) -> Result<T, DecodeError> {
        if let Some(row) = self.try_as_pg_row() {
            T::postgres(row, index)
        } else if let Some(row) = self.try_as_sqlite_row() {
            T::sqlite(row, index)
        } else {
            Err("a hot read runs on PostgreSQL or SQLite".into())
        }
    }
}

/// Reads a row's columns in select-list order.
pub struct Columns<R> {
    row: R,
    next: usize,
}

impl<'r, R: HotRow<'r>> Columns<R> {
    pub fn new(row: R) -> Self {
        Self { row, next: 0 }
    }

    pub fn read<T: HotValue<'r>>(&mut self) -> Result<T, DecodeError> {
        let value = self.row.get(self.next);
        self.next += 1;
        value
    }
}

/// What a hot read decodes a row into, column by column in select-list order; `'r` is the
/// row's borrow, for values that keep it.
pub trait FromRow<'r>: Sized {
    fn read<R: HotRow<'r>>(cols: &mut Columns<R>) -> Result<Self, DecodeError>;
}

/// A single-column row.
impl<'r, T: HotValue<'r>> FromRow<'r> for T {
    fn read<R: HotRow<'r>>(cols: &mut Columns<R>) -> Result<Self, DecodeError> {
        cols.read()
    }
}

/// Declares a hot read's row once: a struct whose fields are its columns, each with the SQL
/// expression it is read from. The declaration gives both halves that must agree, so they
/// cannot drift apart: `COLUMNS`, the select list in field order (`a.id, a.status, ...`), and
/// the [`FromRow`] decoder that reads the fields in that same order. A statement is then
/// written as `format!("SELECT {} FROM ...", Row::COLUMNS)`; `tests/api/hot_reads.rs` runs each
/// one against its SeaORM equivalent on both backends.
///
/// ```ignore
/// hot_row! {
///     /// The session's user.
///     pub struct SessionUser {
///         pub id: i64 = "u.id",
///         pub email: String = "u.email",
///     }
/// }
/// ```
///
/// A row that borrows its text from the database's row names its lifetime `'r`
/// (`pub struct Applicant<'r> { pub name: &'r str = "u.name" }`). Attributes on the struct and
/// on its fields (`#[derive]`, `#[serde]`, doc comments) are kept.
#[macro_export]
macro_rules! hot_row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident<$lt:lifetime> {
            $( $(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty = $column:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name<$lt> {
            $( $(#[$field_meta])* $field_vis $field: $ty, )+
        }

        impl<$lt> $name<$lt> {
            /// The select list of this row, in the order its decoder reads it.
            #[allow(dead_code)]
            pub const COLUMNS: &'static str = $crate::hot_row!(@columns $($column),+);
        }

        impl<$lt> $crate::db::FromRow<$lt> for $name<$lt> {
            fn read<R: $crate::db::HotRow<$lt>>(
                cols: &mut $crate::db::Columns<R>,
            ) -> Result<Self, $crate::db::DecodeError> {
                Ok(Self { $( $field: cols.read()?, )+ })
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty = $column:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$field_meta])* $field_vis $field: $ty, )+
        }

        impl $name {
            /// The select list of this row, in the order its decoder reads it.
            #[allow(dead_code)]
            pub const COLUMNS: &'static str = $crate::hot_row!(@columns $($column),+);
        }

        impl<'r> $crate::db::FromRow<'r> for $name {
            fn read<R: $crate::db::HotRow<'r>>(
                cols: &mut $crate::db::Columns<R>,
            ) -> Result<Self, $crate::db::DecodeError> {
                Ok(Self { $( $field: cols.read()?, )+ })
            }
        }
    };
    (@columns $first:literal $(, $rest:literal)*) => {
        concat!($first $(, ", ", $rest)*)
    };
}
