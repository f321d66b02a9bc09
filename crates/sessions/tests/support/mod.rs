//! What the sessions crate's test binaries share.

/// Whether the Redis tests run: `TEST_REDIS_URL` is set. Without it they are skipped (`what`
/// names them in the note), unless `REQUIRE_EXTERNAL_BACKENDS=1` demands them: then it fails.
pub fn redis_wanted(what: &str) -> bool {
    if std::env::var("TEST_REDIS_URL").is_ok() {
        return true;
    }
    assert!(
        std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() != Ok("1"),
        "REQUIRE_EXTERNAL_BACKENDS=1 but TEST_REDIS_URL is not set"
    );
    eprintln!("skipped: {what} needs TEST_REDIS_URL");
    false
}
