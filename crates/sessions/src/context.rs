/// One isolated session context: its cookies, its JWT payload key and its store namespace.
///
/// Two contexts never share a cookie name, a payload key or a namespace; the engine reads only
/// the cookie of the context it is asked about, so a cookie of another context is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionContext {
    /// Short name used in configuration and logs (`user`, `admin`).
    pub name: &'static str,
    /// The JWT claim that carries the identity's numeric id (`user_id`, `admin_id`).
    pub payload_key: &'static str,
    /// HttpOnly cookie holding the access token.
    pub access_cookie: &'static str,
    /// JS-readable cookie holding the CSRF token.
    pub csrf_cookie: &'static str,
    /// Namespace of the token store that holds this context's sessions.
    pub namespace: &'static str,
}

/// The two contexts of the application, for this crate's unit tests.
#[cfg(test)]
pub(crate) mod examples {
    use super::SessionContext;

    pub const USER: SessionContext = SessionContext {
        name: "user",
        payload_key: "user_id",
        access_cookie: "jwt_access",
        csrf_cookie: "CSRF_TOKEN",
        namespace: "default",
    };

    pub const ADMIN: SessionContext = SessionContext {
        name: "admin",
        payload_key: "admin_id",
        access_cookie: "team_jwt_access",
        csrf_cookie: "TEAM_CSRF_TOKEN",
        namespace: "team",
    };
}
