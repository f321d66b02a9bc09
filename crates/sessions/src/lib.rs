//! The cookie-JWT session engine.
//!
//! It knows nothing of users, admins or SQL. A [`SessionContext`] names the cookies, the JWT
//! payload key and the store namespace of one isolated context; the application defines its
//! contexts as values and hands them to one [`SessionEngine`].
//!
//! A session is identified by its refresh UID (`ruid`), constant for its whole life. Its access
//! token (own `uid`) and CSRF token are attributes that a refresh replaces. The CSRF token is
//! bound to the access token: it is an HMAC of the access UID under a key derived from the
//! signing secret, so the store never needs to hold it and a grace-window replay can hand back
//! the very same value.

#![forbid(unsafe_code)]

mod clock;
mod context;
mod cookies;
mod engine;
mod events;
mod id;
mod origin;
pub mod store;
mod token;

pub use clock::{Clock, ManualClock, SystemClock};
pub use context::SessionContext;
pub use cookies::{CookieDomain, CookiePolicy, SameSite, read_cookie};
pub use engine::{
    Authenticated, CSRF_HEADER, EndReason, IssuedAccess, SessionEngine, SessionError, SessionInfo,
    SessionPolicy,
};
pub use id::SessionId;
pub use origin::OriginPolicy;
pub use store::{
    AnyStore, Counter, ListedSession, LiveAccess, SessionKey, SessionLimits, SessionMeta,
    SessionRecord, StoreError, TokenStore,
};
pub use token::{AccessClaims, SigningKey, SigningSecret, TokenKeys};

/// For [`identity_event!`]'s expansion in other crates.
#[doc(hidden)]
pub use tracing;
