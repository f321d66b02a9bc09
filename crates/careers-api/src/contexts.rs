//! The two session contexts of specification §5.1: their cookies, token payload keys and
//! store namespaces. Every session of one context is invisible to the other.

use sessions::SessionContext;

/// The user context: candidate, employer and marketplace frontends.
pub const USER: SessionContext = SessionContext {
    name: "user",
    payload_key: "user_id",
    access_cookie: "jwt_access",
    csrf_cookie: "CSRF_TOKEN",
    namespace: "default",
};

/// The admin context: the team dashboard.
pub const ADMIN: SessionContext = SessionContext {
    name: "admin",
    payload_key: "admin_id",
    access_cookie: "team_jwt_access",
    csrf_cookie: "TEAM_CSRF_TOKEN",
    namespace: "team",
};
