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

/// `text` as a `LIKE` pattern's literal part: `\`, `%` and `_` escaped with `\`.
pub fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// A field that may be sent as `null` to clear it: absent is `None`, `null` is `Some(None)`
/// (`#[serde(default, deserialize_with = "forms::nullable")]`).
pub fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// `text` as the search indexes hold it (CONTRACT §15): transliterated to ASCII by
/// `deunicode`, lower case, words of letters and digits separated by single spaces.
pub fn fold_text(text: &str) -> String {
    let ascii = deunicode::deunicode(text).to_ascii_lowercase();
    ascii
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The longest slug (CONTRACT §14).
pub const SLUG_MAX: usize = 100;

/// How much of a derived slug comes from the name: room is left for a `-N` suffix.
const DERIVED_SLUG_MAX: usize = 90;

/// Whether `slug` is a well-formed slug: `^[a-z0-9]+(-[a-z0-9]+)*$`, at most 100 characters.
pub fn is_slug(slug: &str) -> bool {
    slug.len() <= SLUG_MAX
        && !slug.is_empty()
        && slug.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// garde's rule for an optional slug field.
pub fn slug(value: &Option<String>, _: &()) -> garde::Result {
    match value {
        Some(slug) if !is_slug(slug) => Err(garde::Error::new(
            "must be lower-case letters and digits in words joined by single hyphens, at most 100 characters",
        )),
        _ => Ok(()),
    }
}

/// The slug of a name (CONTRACT §14): transliterated to ASCII by `deunicode` ("Société
/// Générale" → `societe-generale`), letters and digits kept in lower case, every other run of
/// characters one `-`, trimmed, cut to 90 characters, `company` when nothing is left.
pub fn derive_slug(name: &str) -> String {
    let ascii = deunicode::deunicode(name).to_ascii_lowercase();
    let mut slug = String::with_capacity(ascii.len());
    for word in ascii
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
    {
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(word);
    }
    slug.truncate(DERIVED_SLUG_MAX);
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "company".to_owned()
    } else {
        slug.to_owned()
    }
}

/// garde's rule for an optional website: null or an `http(s)://` URL of at most 500 characters.
pub fn website(value: &Option<String>, _: &()) -> garde::Result {
    let Some(url) = value else { return Ok(()) };
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let host = rest.map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""));
    match host {
        _ if url.len() > 500 => Err(garde::Error::new("must be at most 500 characters")),
        Some(host) if !host.is_empty() && !url.chars().any(char::is_whitespace) => Ok(()),
        _ => Err(garde::Error::new("must be an http:// or https:// URL")),
    }
}

#[cfg(test)]
mod slug_tests {
    use super::*;

    #[test]
    fn slugs_are_derived_as_the_contract_says() {
        assert_eq!(derive_slug("Société Générale"), "societe-generale");
        assert_eq!(derive_slug("  Acme, Inc. -- (EU) "), "acme-inc-eu");
        assert_eq!(derive_slug("Ünïcödé 株式会社"), "unicode-zhu-shi-hui-she");
        assert_eq!(derive_slug("!!!"), "company");
        assert_eq!(derive_slug(""), "company");
        let long = derive_slug(&"ab ".repeat(100));
        assert!(long.len() <= 90 && is_slug(&long), "{long}");
        assert!(is_slug("a-1-b"));
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", &"a".repeat(101)] {
            assert!(!is_slug(bad), "{bad}");
        }
    }
}
