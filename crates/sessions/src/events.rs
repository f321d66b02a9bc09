//! Security events name their identity as the context does (CONTRACT §8): `user_id` for the
//! user context, `admin_id` for the admin context, beside `context`.

/// Logs a security event of `$context` about identity `$id` at `$level` (`info`, `warn`),
/// with the identity under the context's payload key (`admin_id`; any other context's as
/// `user_id`): tracing's field names are fixed at each call site, so the macro writes one of
/// two events.
#[macro_export]
macro_rules! identity_event {
    ($level:ident, $context:expr, $id:expr, $($rest:tt)+) => {{
        let context: &$crate::SessionContext = &$context;
        if context.payload_key == "admin_id" {
            $crate::tracing::$level!(context = context.name, admin_id = $id, $($rest)+)
        } else {
            $crate::tracing::$level!(context = context.name, user_id = $id, $($rest)+)
        }
    }};
}
