//! Which request a runtime thread is handling, and from which client address, for the log
//! lines written meanwhile.

use std::cell::{Cell, RefCell};
use std::net::IpAddr;

use axum::http::HeaderValue;

thread_local! {
    /// The id of the request whose handler this thread is running, for the log lines written
    /// meanwhile (`json`); empty between requests. One task runs on a thread at a
    /// time, so the id of the request being polled is the id of every event it emits.
    static HANDLING: RefCell<String> = const { RefCell::new(String::new()) };
    /// The client address of that request (CONTRACT §8: security events name it).
    static CLIENT: Cell<Option<IpAddr>> = const { Cell::new(None) };
}

/// The client address of the request this thread is handling, if any.
pub(crate) fn client_ip() -> Option<IpAddr> {
    CLIENT.with(Cell::get)
}

/// Calls `f` with the id of the request this thread is handling, if any.
pub(crate) fn with_request_id<R>(f: impl FnOnce(Option<&str>) -> R) -> R {
    HANDLING.with(|id| match id.try_borrow() {
        Ok(id) if !id.is_empty() => f(Some(id.as_str())),
        _ => f(None),
    })
}

/// Marks the thread as handling the request `id` until dropped (also when the handler panics):
/// the edge layer holds one while it polls a request's handler.
pub(crate) struct Handling;

impl Handling {
    pub(crate) fn start(id: &HeaderValue, client: Option<IpAddr>) -> Self {
        CLIENT.with(|current| current.set(client));
        HANDLING.with(|current| {
            let mut current = current.borrow_mut();
            current.clear();
            current.push_str(id.to_str().unwrap_or_default());
        });
        Handling
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        CLIENT.with(|current| current.set(None));
        HANDLING.with(|current| current.borrow_mut().clear());
    }
}
