//! Submitted forms (specification §4.5): one field per attribute, associations as nested
//! objects. Every field is optional at the JSON level so that a missing field is a 422 with its
//! nested path (a wrong JSON type stays a 400); presence is then required per operation.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::Deserialize;

/// Field errors keyed by the nested form path (`identities_user.id`), each with its messages.
pub type FieldErrors = BTreeMap<String, Vec<String>>;

/// A form that failed validation: its field errors (never empty). `error.rs` answers it as the
/// contract's 422 `validation_failed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub FieldErrors);

impl Invalid {
    /// One field with one message.
    pub fn field(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self(BTreeMap::from([(path.into(), vec![message.into()])]))
    }
}

/// A reference to another record: `{"id": 1}`.
#[derive(Debug, Clone, Copy, Deserialize, garde::Validate, utoipa::ToSchema)]
pub struct IdRef {
    #[garde(required)]
    pub id: Option<i64>,
}

impl IdRef {
    /// The id of a reference already validated as present.
    pub fn id_of(reference: &Option<IdRef>) -> Option<i64> {
        reference.and_then(|r| r.id)
    }
}

/// Field errors gathered from garde's rules and from per-operation presence checks.
#[derive(Debug, Default)]
pub struct Errors(FieldErrors);

impl Errors {
    pub fn of<T: garde::Validate<Context = ()>>(form: &T) -> Self {
        let mut errors = Self::default();
        if let Err(report) = form.validate() {
            for (path, error) in report.iter() {
                let message = match error.message() {
                    "not set" => "is required".to_string(),
                    other => other.to_string(),
                };
                errors.add(path.to_string(), message);
            }
        }
        errors
    }

    pub fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.entry(path.into()).or_default().push(message.into());
    }

    /// Reports `path` as required unless it is present.
    pub fn require(&mut self, path: &str, present: bool) {
        if !present && !self.0.contains_key(path) {
            self.add(path, "is required");
        }
    }

    /// Reports a new password at `path` that zxcvbn finds too easy to guess
    /// ([`password_weakness`]); checked only once the field has no other error.
    pub fn strong_password(&mut self, path: &str, password: Option<&str>, user_inputs: &[&str]) {
        if let Some(password) = password
            && !self.0.contains_key(path)
            && let Some(message) = password_weakness(password, user_inputs)
        {
            self.add(path, message);
        }
    }

    pub fn finish(self) -> Result<(), Invalid> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Invalid(self.0))
        }
    }
}

/// The lowest zxcvbn score a new password may have (0-4; 3: "safely unguessable", ASVS 2.1.7).
pub const MIN_STRENGTH: u8 = 3;
/// How much of a password zxcvbn reads: its matching grows quickly with the length, and a
/// password whose first 128 characters are strong is strong.
const JUDGED_CHARS: usize = 128;

/// Why zxcvbn finds a new password too easy to guess (its score below [`MIN_STRENGTH`]), or
/// `None` when it is strong enough. `user_inputs` are the account's own words (e-mail, names),
/// which make a password weaker. The message is zxcvbn's warning, or the service's own where
/// zxcvbn gives none; never empty.
pub fn password_weakness(password: &str, user_inputs: &[&str]) -> Option<String> {
    let judged = match password.char_indices().nth(JUDGED_CHARS) {
        Some((end, _)) => &password[..end],
        None => password,
    };
    let entropy = zxcvbn::zxcvbn(judged, user_inputs);
    if u8::from(entropy.score()) >= MIN_STRENGTH {
        return None;
    }
    Some(
        entropy
            .feedback()
            .and_then(|feedback| feedback.warning())
            .map(|warning| format!("is too easy to guess: {warning}"))
            .unwrap_or_else(|| {
                "is too easy to guess: add words or characters that are less common".to_owned()
            }),
    )
}

/// garde rule: an optional `YYYY-MM-DD` date.
pub fn date(value: &Option<String>, _: &()) -> garde::Result {
    match value {
        Some(text) if parse_date(text).is_none() => {
            Err(garde::Error::new("must be a date (YYYY-MM-DD)"))
        }
        _ => Ok(()),
    }
}

pub fn parse_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}
