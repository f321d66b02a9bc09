//! Tells the tests whether this build runs the Redis suites, so that a plain `cargo test`
//! reports them as ignored instead of as passed (tests/store_contract.rs, tests/cluster.rs).

fn main() {
    for name in ["TEST_REDIS_URL", "REQUIRE_EXTERNAL_BACKENDS"] {
        println!("cargo::rerun-if-env-changed={name}");
    }
    println!("cargo::rustc-check-cfg=cfg(redis_backend)");
    // REQUIRE_EXTERNAL_BACKENDS=1 (CI) runs them whatever is set, so that a missing one fails.
    let required = std::env::var("REQUIRE_EXTERNAL_BACKENDS").as_deref() == Ok("1");
    if required || std::env::var_os("TEST_REDIS_URL").is_some() {
        println!("cargo::rustc-cfg=redis_backend");
    }
}
