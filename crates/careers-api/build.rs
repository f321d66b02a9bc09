//! Tells the tests whether this build runs the PostgreSQL + Redis suites, so that a plain
//! `cargo test` reports them as ignored instead of as passed (tests/api/helpers.rs).

fn main() {
    for name in [
        "TEST_DATABASE_URL",
        "TEST_REDIS_URL",
        "REQUIRE_EXTERNAL_BACKENDS",
    ] {
        println!("cargo::rerun-if-env-changed={name}");
    }
    println!("cargo::rustc-check-cfg=cfg(external_backends)");
    let set = |name| std::env::var_os(name).is_some();
    // REQUIRE_EXTERNAL_BACKENDS=1 (CI) runs them whatever is set, so that a missing one fails.
    let required = std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() == Ok("1");
    if required || (set("TEST_DATABASE_URL") && set("TEST_REDIS_URL")) {
        println!("cargo::rustc-cfg=external_backends");
    }
}
