//! The OpenAPI 3.1 document, generated from the handlers' annotations. Every route is
//! registered through `utoipa_axum::routes!`, so a route cannot exist without its document.

use utoipa::openapi::OpenApi as Document;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::areas;
use crate::error::ErrorBody;
use crate::state::AppState;
use crate::views::Json;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "careers-api",
        description = "Careers marketplace API: two isolated cookie-JWT session contexts (users \
                       and admins), CSRF double-submit, per-area authorization. Errors are \
                       always `{\"error\": {\"code\", \"message\", \"fields\"?}}`."
    ),
    // The shared error responses (`error::responses`) reference `ErrorBody`; utoipa collects
    // schemas only from `body = ...`, so it is registered here.
    // Relative to the document's own address: the API serves its document (`/openapi.json`),
    // so the origin it was fetched from is the server, whatever the deployment.
    servers((url = "/", description = "The origin this document was fetched from")),
    components(schemas(ErrorBody)),
    modifiers(&SecuritySchemes),
    tags(
        (name = "sessions", description = "Login, refresh and logout of both contexts; their \
                                           sessions, password change and the admins' second factor"),
        (name = "identities", description = "Authenticated user area, sign-up and password reset"),
        (name = "employer", description = "Users with an org profile, scoped to their company"),
        (name = "talent", description = "Users with a talent profile: their profile"),
        (name = "candidate", description = "Users with a talent profile: their applications"),
        (name = "marketplace", description = "Public; personalised when a user is identified"),
        (name = "team", description = "Admins"),
        (name = "health", description = "Liveness and readiness")
    )
)]
struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut Document) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "user_session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new("jwt_access"))),
        );
        components.add_security_scheme(
            "admin_session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new("team_jwt_access"))),
        );
        components.add_security_scheme(
            "csrf_token",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-CSRF-Token",
                "The value of the context's CSRF cookie (or the `csrf` of the login/refresh body)",
            ))),
        );
    }
}

/// Every route of the API with its documentation.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(areas::sessions::routes())
        .merge(areas::admin_totp::routes())
        .merge(areas::identities::routes())
        .merge(areas::membership::routes())
        .merge(areas::org::routes())
        .merge(areas::company::routes())
        .merge(areas::hiring::routes())
        .merge(areas::webhooks::routes())
        .merge(areas::talent::routes())
        .merge(areas::candidate::routes())
        .merge(areas::marketplace::routes())
        .merge(areas::team::routes())
        .merge(areas::health::routes())
        .routes(routes!(openapi_json))
}

/// The document, built once, on first use.
pub fn document() -> &'static Document {
    static DOCUMENT: std::sync::LazyLock<Document> = std::sync::LazyLock::new(|| {
        let mut document = router().into_openapi();
        unique_operation_ids(&mut document);
        public_operations_say_so(&mut document);
        document
    });
    &DOCUMENT
}

/// utoipa names an operation after its handler, and areas reuse handler names (`list_profiles`
/// in the employer and the team area): each operation is named after its method and path
/// instead (`get_admin_user_org_user_profiles_id`), unique by construction, as client
/// generators require.
fn unique_operation_ids(document: &mut Document) {
    for (path, item) in document.paths.paths.iter_mut() {
        let slug: String = path
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect::<String>()
            .split('_')
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("_");
        for (method, operation) in [
            ("get", item.get.as_mut()),
            ("post", item.post.as_mut()),
            ("put", item.put.as_mut()),
            ("patch", item.patch.as_mut()),
            ("delete", item.delete.as_mut()),
        ] {
            if let Some(operation) = operation {
                operation.operation_id = Some(format!("{method}_{slug}"));
            }
        }
    }
}

/// An operation that names no security requirement is public (login, sign-up, password reset,
/// health, this document): it says so with an empty list (`security: []`), as linters and
/// client generators expect, rather than by leaving the field out. Which operations are public
/// is checked against the contract by `tests/api/openapi.rs`.
fn public_operations_say_so(document: &mut Document) {
    for item in document.paths.paths.values_mut() {
        for operation in [
            item.get.as_mut(),
            item.post.as_mut(),
            item.put.as_mut(),
            item.patch.as_mut(),
            item.delete.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            operation.security.get_or_insert_with(Vec::new);
        }
    }
}

#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "health",
    summary = "This OpenAPI 3.1 document",
    responses((status = 200, description = "The document", body = serde_json::Value))
)]
async fn openapi_json() -> Json<&'static Document> {
    Json(document())
}
