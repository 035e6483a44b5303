//! `row!`: a struct that sqlx reads from a result row by column name.
//!
//! What `#[derive(sqlx::FromRow)]` does, as a declarative macro: the derive lives in sqlx's
//! proc-macro crate, which with the `sqlite` and `postgres` features builds both database
//! drivers (and SQLite's C amalgamation) a second time for the compiler's host, about a fifth of
//! a first build's CPU time for the handful of plain structs below.

/// Defines the struct as written and implements `sqlx::FromRow` for it, each field read from
/// the column of the same name, for any backend whose row can decode the field types.
macro_rules! row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty ),*
        }

        impl<'r, R: ::sqlx::Row> ::sqlx::FromRow<'r, R> for $name
        where
            &'r str: ::sqlx::ColumnIndex<R>,
            $( $ty: ::sqlx::Decode<'r, R::Database> + ::sqlx::Type<R::Database>, )*
        {
            fn from_row(row: &'r R) -> ::std::result::Result<Self, ::sqlx::Error> {
                Ok(Self { $( $field: row.try_get(stringify!($field))? ),* })
            }
        }
    };
}

pub(crate) use row;
