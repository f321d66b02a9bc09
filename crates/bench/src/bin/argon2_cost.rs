//! The cost of one argon2id hash with the service's parameters (OWASP: m=19456 KiB, t=2, p=1)
//! on one core, with the memory block reused as the service does: the physical ceiling of
//! logins per second per core, against which `run.py` reports the measured login rate.
//! Prints one JSON line: `{"hash_ms": …, "ceiling_per_s": …}` (median of N hashes).

use argon2::{Algorithm, Argon2, Block, Params, Version};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(40, |v| v.parse().expect("a count"));
    let params = Params::new(19_456, 2, 1, Some(32)).expect("OWASP parameters are valid");
    let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let mut memory = vec![Block::default(); params.block_count()];
    let mut out = [0u8; 32];
    let mut times: Vec<f64> = (0..n + 2)
        .map(|i| {
            let start = std::time::Instant::now();
            argon
                .hash_password_into_with_memory(
                    b"bench-password-1",
                    &[i as u8; 16],
                    &mut out,
                    &mut memory,
                )
                .expect("hashing cannot fail");
            start.elapsed().as_secs_f64() * 1000.0
        })
        .skip(2) // warm-up
        .collect();
    times.sort_by(|a, b| a.total_cmp(b));
    let median = times[times.len() / 2];
    println!(
        "{}",
        serde_json::json!({"hash_ms": median, "ceiling_per_s": 1000.0 / median})
    );
}
