//! Response shapes. Each follows one model and nests associations under their names; none is
//! an entity, so columns such as `password_digest` can never leak.

pub mod careers;
pub mod identities;
pub mod json;
pub mod org;
pub mod timestamp;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, SecondsFormat};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// A JSON response: what `axum::Json` answers (`Content-Type: application/json`, serde_json's
/// bytes), serialised into a `Vec` of 1 KiB instead of axum's 128-byte `BytesMut` writer, which
/// pays a capacity check per fragment and grows a page of 25 applications by six copies
/// (docs/PERFORMANCE.md, session 10), by [`json::to_writer`], which writes serde_json's bytes
/// faster, or by serde_json itself for what that leaves to it. Every JSON body the service
/// answers goes through it, errors included, but the employer's page of applications, which
/// writes its own ([`EmployerApplicationList::write_json`], DECISIONS 64) and is answered the
/// same way.
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(1024);
        let written = json::to_writer(&mut body, &self.0).or_else(|_| {
            body.clear();
            serde_json::to_writer(&mut body, &self.0)
        });
        answer(body, written)
    }
}

/// The answer of a JSON `body` that `written` says was written whole.
fn answer(body: Vec<u8>, written: Result<(), impl std::fmt::Display>) -> Response {
    match written {
        Ok(()) => {
            let mut response = Response::new(Body::from(body));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        // A view that cannot be written (none of ours can: no map has non-string keys) is
        // the server's fault; the contract's 500, whose own body always serialises.
        Err(error) => {
            tracing::error!(%error, "a response body could not be serialised");
            ApiError::Internal.into_response()
        }
    }
}

pub fn rfc3339(unix_seconds: i64) -> String {
    DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `?page=` (from 1) and `?per_page=` (default 25, at most 100).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// Page number, from 1.
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u64>,
    /// Items per page, 1 to 100 (default 25).
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u64>,
}

#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct Meta {
    pub page: u64,
    pub per_page: u64,
    pub total: u64,
}

impl PageParams {
    pub const DEFAULT_PER_PAGE: u64 = 25;
    pub const MAX_PER_PAGE: u64 = 100;

    /// The page and page size, or a 400 for values out of range.
    pub fn resolve(&self) -> Result<(u64, u64), ApiError> {
        let page = self.page.unwrap_or(1);
        let per_page = self.per_page.unwrap_or(Self::DEFAULT_PER_PAGE);
        if page == 0 || page > 1_000_000 {
            return Err(ApiError::MalformedRequest(
                "page must be between 1 and 1000000".into(),
            ));
        }
        if per_page == 0 || per_page > Self::MAX_PER_PAGE {
            return Err(ApiError::MalformedRequest(
                "per_page must be between 1 and 100".into(),
            ));
        }
        Ok((page, per_page))
    }
}

/// Declares a response envelope: the payload under the model's table name, plus `meta` for lists.
macro_rules! envelope {
    ($(#[$doc:meta])* $name:ident { $key:ident: $ty:ty }) => {
        $(#[$doc])*
        #[derive(Debug, serde::Serialize, utoipa::ToSchema)]
        pub struct $name {
            pub $key: $ty,
        }
    };
    ($(#[$doc:meta])* $name:ident { $key:ident: $ty:ty, meta }) => {
        $(#[$doc])*
        #[derive(Debug, serde::Serialize, utoipa::ToSchema)]
        pub struct $name {
            pub $key: $ty,
            pub meta: Meta,
        }
    };
}

envelope!(IdentitiesUserOne {
    identities_users: identities::UserView
});
envelope!(IdentitiesUserList { identities_users: Vec<identities::UserView>, meta });
envelope!(OrgCompanyList { org_companies: Vec<org::CompanyView>, meta });
envelope!(OrgUserProfileOne {
    org_user_profiles: org::OrgUserProfileView
});
envelope!(OrgUserProfileList { org_user_profiles: Vec<org::OrgUserProfileView>, meta });
envelope!(CareersUserProfileOne {
    careers_user_profiles: careers::TalentProfileView
});
envelope!(CareersJobOne {
    careers_jobs: careers::JobView
});
envelope!(CareersJobList { careers_jobs: Vec<careers::JobView>, meta });
envelope!(MarketplaceJobOne {
    careers_jobs: careers::MarketplaceJobView
});
envelope!(MarketplaceJobList { careers_jobs: Vec<careers::MarketplaceJobView>, meta });
/// The employer's page of applications, borrowing its text from the rows it was read from.
/// Answered as [`Json`] answers it, its body written by [`Self::write_json`].
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct EmployerApplicationList<'a> {
    pub careers_job_applications: Vec<careers::EmployerApplicationItem<'a>>,
    pub meta: Meta,
}

impl EmployerApplicationList<'_> {
    /// Writes the page's JSON: the bytes its `Serialize` writes (serde_json's), with the keys
    /// and punctuation as literals, each item by
    /// [`careers::EmployerApplicationItem::write_json`].
    pub fn write_json(&self, out: &mut Vec<u8>) -> json::Result {
        out.extend_from_slice(b"{\"careers_job_applications\":[");
        for (i, item) in self.careers_job_applications.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_json(out)?;
        }
        out.extend_from_slice(b"],\"meta\":");
        json::to_writer(out, &self.meta)?;
        out.push(b'}');
        Ok(())
    }
}

impl IntoResponse for EmployerApplicationList<'_> {
    fn into_response(self) -> Response {
        // About 260 bytes an item with a short cover letter; a longer page grows its buffer.
        let mut body = Vec::with_capacity(128 + 320 * self.careers_job_applications.len());
        let written = self.write_json(&mut body);
        answer(body, written)
    }
}
envelope!(EmployerApplicationOne {
    careers_job_applications: careers::EmployerApplicationDetail
});
envelope!(CandidateApplicationList {
    careers_job_applications: Vec<careers::CandidateApplicationItem>,
    meta
});
envelope!(CandidateApplicationOne {
    careers_job_applications: careers::CandidateApplicationItem
});

impl Meta {
    pub fn new(page: u64, per_page: u64, total: u64) -> Self {
        Self {
            page,
            per_page,
            total,
        }
    }
}

/// A page of 25 applications of the benchmark's shape (timestamps with nanoseconds), each with
/// `cover_letter`: for the JSON writer's tests and its micro-benchmark (`crates/bench`).
#[doc(hidden)]
pub fn sample_application_page(cover_letter: &str) -> EmployerApplicationList<'_> {
    use careers::{ApplicantBrief, ApplicationAttrs, EmployerApplicationItem};
    let time = DateTime::from_timestamp(1_700_000_000, 456_789_012).unwrap_or_default();
    EmployerApplicationList {
        careers_job_applications: (1..=25)
            .map(|id| EmployerApplicationItem {
                application: ApplicationAttrs {
                    id,
                    status: "submitted".into(),
                    cover_letter: cover_letter.into(),
                    created_at: time.into(),
                    updated_at: time.into(),
                },
                career_user_profile: ApplicantBrief {
                    id: id + 100,
                    identities_user: org::UserBrief {
                        id: id + 200,
                        first_name: format!("Applicant{id}").into(),
                        last_name: "Bench".into(),
                    },
                },
            })
            .collect(),
        meta: Meta::new(1, 25, 25),
    }
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;
    use chrono::DateTime;
    use proptest::prelude::*;
    use serde_json::json;

    /// The same status, headers and bytes.
    async fn same_answer(ours: axum::response::Response, theirs: axum::response::Response) {
        assert_eq!(ours.status(), theirs.status());
        assert_eq!(ours.headers(), theirs.headers());
        let ours = axum::body::to_bytes(ours.into_body(), usize::MAX)
            .await
            .unwrap();
        let theirs = axum::body::to_bytes(theirs.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(ours, theirs);
    }

    /// What `axum::Json` answers, whose place it takes.
    async fn answers_as_axum_json<T: serde::Serialize>(value: T) {
        same_answer(
            super::Json(&value).into_response(),
            axum::Json(&value).into_response(),
        )
        .await;
    }

    #[tokio::test]
    async fn json_answers_as_axum_json_does() {
        let page = json!({"items": (0..40).map(|i| json!({"id": i, "text": "\"quoted\"\n\u{1}é"}))
            .collect::<Vec<_>>(), "meta": {"page": 1}});
        for value in [page, json!({}), json!("x")] {
            answers_as_axum_json(value).await;
        }
        // What `json::to_writer` leaves to serde_json: a map with integer keys, a raw value.
        answers_as_axum_json(std::collections::BTreeMap::from([(1, "one"), (2, "two")])).await;
        answers_as_axum_json(serde_json::value::RawValue::from_string("[1, 2]".into()).unwrap())
            .await;
    }

    /// A value serde_json refuses is the contract's 500, not a half-written body.
    #[tokio::test]
    async fn json_that_cannot_be_written_is_the_internal_error() {
        let refused = std::collections::BTreeMap::from([((1, 2), "a map with tuple keys")]);
        let response = super::Json(refused).into_response();
        assert_eq!(response.status(), 500);
        assert_eq!(response.headers()["content-type"], "application/json");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal");
    }

    /// Any text, ids and timestamps.
    fn application_item() -> impl Strategy<Value = super::careers::EmployerApplicationItem<'static>>
    {
        use super::careers::{ApplicantBrief, ApplicationAttrs, EmployerApplicationItem};
        use super::org::UserBrief;
        // Text of every kind: letters, any character, and what needs an escape.
        let text = || {
            prop_oneof![
                "[a-z ]{0,24}",
                ".{0,40}",
                "[a-z\"\\\\\\x00-\\x1f\u{7f}\u{e9}\u{2028}]{0,16}",
            ]
        };
        // From before year 0 to after 9999, leap seconds included: both of the timestamp
        // writer's paths.
        // Each as a time or, where it has one, as the text SQLite stores it in.
        let time = (
            -100_000_000_000i64..300_000_000_000,
            prop_oneof![0u32..1_000_000_000, 1_000_000_000u32..2_000_000_000],
            any::<bool>(),
        )
            .prop_filter_map("a valid time", |(seconds, nanos, stored)| {
                let time = DateTime::from_timestamp(seconds, nanos)?;
                let text = time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false);
                Some(match super::timestamp::Stamp::stored(text.as_bytes()) {
                    Some(stamp) if stored => stamp.into_owned(),
                    _ => time.into(),
                })
            });
        (
            (any::<i64>(), text(), text(), time.clone(), time),
            (any::<i64>(), any::<i64>(), text(), text()),
        )
            .prop_map(
                |(
                    (id, status, cover_letter, created_at, updated_at),
                    (profile, user, first, last),
                )| {
                    EmployerApplicationItem {
                        application: ApplicationAttrs {
                            id,
                            status: status.into(),
                            cover_letter: cover_letter.into(),
                            created_at,
                            updated_at,
                        },
                        career_user_profile: ApplicantBrief {
                            id: profile,
                            identities_user: UserBrief {
                                id: user,
                                first_name: first.into(),
                                last_name: last.into(),
                            },
                        },
                    }
                },
            )
    }

    proptest! {
        /// The page written by hand is what its `Serialize` writes through serde_json, byte
        /// for byte: a field added to the views and not to `write_json` fails this.
        #[test]
        fn the_page_is_written_as_serialize_writes_it(
            items in proptest::collection::vec(application_item(), 0..4),
            (page, per_page, total) in any::<(u64, u64, u64)>(),
        ) {
            let list = super::EmployerApplicationList {
                careers_job_applications: items,
                meta: super::Meta::new(page, per_page, total),
            };
            let mut ours = Vec::new();
            list.write_json(&mut ours).unwrap();
            let serde = serde_json::to_vec(&list).unwrap();
            prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(serde).unwrap());
        }
    }

    /// The page's answer: the status, headers and body of `Json`'s, which writes it through
    /// its `Serialize`.
    #[tokio::test]
    async fn the_page_answers_as_json_does() {
        let cover_letter = "Dear \"team\",\n\u{1}\u{e9}";
        same_answer(
            super::sample_application_page(cover_letter).into_response(),
            super::Json(super::sample_application_page(cover_letter)).into_response(),
        )
        .await;
    }
}
