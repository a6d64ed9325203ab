//! The database's errors as SQL errors: what a statement reports when the database refuses
//! it (a denial, a missing reference, a damaged store) keeps the database's exit code.

use rnt_db::{ArithmeticFault, DbError, DbResult};
use rnt_sql::error::{ConstraintKind, SqlErrorKind};
use rnt_sql::SqlError;

/// `error` as the SQL session reports it.
pub fn from_db(error: DbError) -> SqlError {
    if let DbError::Program { rendered, .. } = &error {
        // Rules the front end made that the language refuses: the compiler's limit, not
        // the user's error, and never shown as rules.
        return SqlError::uncompiled(rendered);
    }
    let kind = match &error {
        DbError::DenialViolated { denial, .. } => {
            SqlErrorKind::Constraint(ConstraintKind::of_denial(denial))
        }
        DbError::Arithmetic {
            fault: ArithmeticFault::DivisionByZero,
            ..
        } => SqlErrorKind::DivisionByZero,
        DbError::Arithmetic {
            fault: ArithmeticFault::Overflow,
            ..
        } => SqlErrorKind::Overflow,
        DbError::Conflict(_) => SqlErrorKind::Conflict,
        other => SqlErrorKind::Db(other.exit_code()),
    };
    let text = error.to_string();
    let message = text.strip_prefix("error: ").unwrap_or(&text).to_string();
    SqlError::new(kind, message)
}

/// A database result read as a SQL one (`db.head().sql()?`).
pub trait Sql<T> {
    /// The result with its error as [`from_db`] reports it.
    fn sql(self) -> Result<T, SqlError>;
}

impl<T> Sql<T> for DbResult<T> {
    fn sql(self) -> Result<T, SqlError> {
        self.map_err(from_db)
    }
}
