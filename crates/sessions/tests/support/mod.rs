//! What the sessions crate's test binaries share.

/// `TEST_REDIS_URL`, where the Redis tests run. Without it they are skipped (`what` names them
/// in the note), unless `REQUIRE_EXTERNAL_BACKENDS=1` demands them: then it fails.
pub fn redis_url(what: &str) -> Option<String> {
    if let Ok(url) = std::env::var("TEST_REDIS_URL") {
        return Some(url);
    }
    assert!(
        std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() != Ok("1"),
        "REQUIRE_EXTERNAL_BACKENDS=1 but TEST_REDIS_URL is not set"
    );
    eprintln!("skipped: {what} needs TEST_REDIS_URL");
    None
}
