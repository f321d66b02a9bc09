//! Measures whether login timing reveals which e-mails exist. Not a pass/fail timing test (the
//! machine is noisy); run by hand and record the numbers in SECURITY.md:
//! `cargo test --release -p careers-api --test api -- --ignored --nocapture timing`

use std::time::Instant;

use careers_api::areas::USER;

use crate::helpers::*;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a test: run by hand"]
async fn timing_of_unknown_email_and_wrong_password() {
    let app = TestApp::spawn(Backend::SqliteMemoryStore).await;
    // Ten known accounts: each may fail nine times before its own throttle; 90 failures stay
    // under the address limit of 100.
    for n in 0..10 {
        app.create_user(&format!("known{n}@example.com")).await;
    }
    let (mut unknown, mut wrong) = (Vec::new(), Vec::new());
    for round in 0..45 {
        let started = Instant::now();
        let email = format!("ghost{round}@example.com");
        app.login_raw(&USER, &email, "wrong-password").await;
        unknown.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        let email = format!("known{}@example.com", round % 10);
        app.login_raw(&USER, &email, "wrong-password").await;
        wrong.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let (u, w) = (median(unknown), median(wrong));
    println!("login timing, median of 45: unknown e-mail {u:.2} ms, wrong password {w:.2} ms");
    println!(
        "difference {:.2} ms ({:.1} %)",
        (u - w).abs(),
        (u - w).abs() / w * 100.0
    );
}
