//! The benchmark's programs start and answer as `run.py` reads them. Being integration tests,
//! they also make `cargo test` build the programs beside the service's binary, with the test
//! build's artifacts: CI's smoke run (`run.py --smoke --profile debug --no-build`) then compiles
//! nothing of the service again.

use std::process::Command;

#[test]
fn argon2_cost_prints_the_hash_time_and_the_ceiling_it_implies() {
    let out = Command::new(env!("CARGO_BIN_EXE_argon2_cost"))
        .arg("3")
        .output()
        .expect("run argon2_cost");
    assert!(out.status.success());
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    let ms = line["hash_ms"].as_f64().expect("hash_ms");
    let ceiling = line["ceiling_per_s"].as_f64().expect("ceiling_per_s");
    assert!(ms > 0.0, "{line}");
    assert!((ceiling * ms - 1000.0).abs() < 1e-6, "{line}");
}

#[test]
fn the_load_generator_explains_its_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_load"))
        .arg("--help")
        .output()
        .expect("run load");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for option in ["--addr", "--path", "--connections"] {
        assert!(help.contains(option), "{option} in {help}");
    }
}

#[test]
fn the_floor_refuses_to_start_without_its_settings() {
    let out = Command::new(env!("CARGO_BIN_EXE_floor"))
        .env_clear()
        .output()
        .expect("run floor");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("JWT_SIGNING_SECRET"));
}
