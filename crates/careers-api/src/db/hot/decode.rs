//! Decoding a hot read's row: the same Rust type from every backend, by the drivers' own
//! decoders (rusqlite's `FromSql`, sqlx's `Decode`), column by column in select-list order.
//! [`hot_row!`](crate::db::hot_row) declares a row's columns and its decoder in one place.

use chrono::{DateTime, Utc};
use rusqlite::types::{FromSql, ValueRef};
use sea_orm::sqlx::postgres::PgRow;
use sea_orm::sqlx::sqlite::SqliteRow;
use sea_orm::sqlx::{self, Decode, Postgres, Row, Sqlite, Type};
use sea_orm::{DbErr, QueryResult, RuntimeErr};

use super::postgres::{INT8, postgres_i64, postgres_text, postgres_timestamptz};

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

/// Owned values: rusqlite's `FromSql`, sqlx's `Decode` on SQLite in memory, and on PostgreSQL
/// the value's bytes where `postgres.rs` reads them, else sqlx's `Decode`.
macro_rules! owned {
    ($($ty:ty => $fast:expr),*) => {$(
        impl<'r> HotValue<'r> for $ty {
            fn inline(value: ValueRef<'r>) -> Result<Self, DecodeError> {
                Ok(<$ty as FromSql>::column_result(value)?)
            }

            fn sqlite(row: &'r SqliteRow, index: usize) -> Result<Self, DecodeError> {
                Ok(row.try_get(index)?)
            }

            fn postgres(row: &'r PgRow, index: usize) -> Result<Self, DecodeError> {
                match $fast(row, index) {
                    Some(value) => Ok(value),
                    None => Ok(row.try_get(index)?),
                }
            }
        }
    )*};
}

owned!(
    i64 => |row, index| postgres_i64(row, index, INT8),
    Option<i64> => |row, index| postgres_i64(row, index, INT8).map(Some),
    String => |row, index| postgres_text(row, index).map(str::to_owned)
);

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
        match postgres_timestamptz(row, index) {
            Some(time) => Ok(time),
            None => Ok(row.try_get(index)?),
        }
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
        match postgres_text(row, index) {
            Some(text) => Ok(text),
            None => decode_str::<Postgres, _>(row, index),
        }
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

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use sea_orm::sqlx::postgres::PgRow;
    use sea_orm::sqlx::{self, Executor, PgPool, Row};

    use super::super::postgres::postgres_timestamptz;
    use super::HotValue;

    /// What `T` reads from a row, as text: the value's JSON, or the error's message.
    fn read<'r, T: HotValue<'r> + serde::Serialize>(row: &'r PgRow) -> String {
        match T::postgres(row, 0) {
            Ok(value) => serde_json::to_string(&value).unwrap(),
            Err(error) => error.to_string(),
        }
    }

    /// What sqlx's own `try_get` reads, in the same form.
    fn sqlx_reads<'r, T>(row: &'r PgRow) -> String
    where
        T: sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres> + serde::Serialize,
    {
        match row.try_get::<T, _>(0) {
            Ok(value) => serde_json::to_string(&value).unwrap(),
            Err(error) => error.to_string(),
        }
    }

    /// The oracle of the PostgreSQL value readers: values of PostgreSQL's types read through
    /// real rows, in the binary format of prepared statements and the text format of simple
    /// queries, answer what sqlx's own decoder answers, value or error, on the fast path or not.
    #[cfg_attr(not(external_backends), ignore = "needs TEST_DATABASE_URL")]
    #[tokio::test]
    async fn postgres_values_decode_as_sqlx_does() {
        let Ok(url) = std::env::var("TEST_DATABASE_URL") else {
            assert!(
                std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() != Ok("1"),
                "REQUIRE_EXTERNAL_BACKENDS=1 but TEST_DATABASE_URL is not set"
            );
            eprintln!("skipped: needs TEST_DATABASE_URL");
            return;
        };
        let pool = PgPool::connect(&url).await.unwrap();
        let values = [
            "'submitted'::text",
            "'a cover letter, with \"quotes\" and ~'::text",
            "''::text",
            "'Zoë'::text",
            "'日本語'::varchar",
            "'padded'::char(10)",
            "'pg_catalog'::name",
            "NULL::text",
            "42::bigint",
            "(-9223372036854775807 - 1)::bigint",
            "NULL::bigint",
            "42::integer",
            "42::numeric",
            "'2026-11-25 06:00:00.123456+00'::timestamptz",
            "'2026-11-25 07:00:00+01'::timestamptz",
            "'1999-12-31 23:59:59.999999+00'::timestamptz",
            "'4713-01-01 00:00:00+00 BC'::timestamptz",
            "NULL::timestamptz",
            "'2026-11-25 06:00:00'::timestamp",
            "true",
        ];
        let mut rows = Vec::new();
        for value in values {
            let sql = format!("SELECT {value}");
            let prepared = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .fetch_one(&pool)
                .await
                .unwrap();
            let simple = pool
                .fetch_one(sqlx::raw_sql(sqlx::AssertSqlSafe(sql)))
                .await
                .unwrap();
            rows.push((value, prepared));
            rows.push((value, simple));
        }
        for (value, row) in &rows {
            assert_eq!(
                read::<&str>(row),
                sqlx_reads::<&str>(row),
                "&str of {value}"
            );
            assert_eq!(
                read::<String>(row),
                sqlx_reads::<String>(row),
                "String of {value}"
            );
            assert_eq!(read::<i64>(row), sqlx_reads::<i64>(row), "i64 of {value}");
            assert_eq!(
                read::<Option<i64>>(row),
                sqlx_reads::<Option<i64>>(row),
                "Option<i64> of {value}"
            );
            assert_eq!(
                read::<DateTime<Utc>>(row),
                sqlx_reads::<DateTime<Utc>>(row),
                "timestamp of {value}"
            );
        }
        // Timestamps chrono cannot hold are left to sqlx's decoder.
        for value in ["'infinity'", "'-infinity'"] {
            let sql = format!("SELECT {value}::timestamptz");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql))
                .fetch_one(&pool)
                .await
                .unwrap();
            assert_eq!(postgres_timestamptz(&row, 0), None, "{value}");
        }
    }
}
