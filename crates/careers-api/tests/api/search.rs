//! The marketplace's search (CONTRACT §15 "Marketplace search"): `q` (case- and
//! accent-insensitive whole words, every word, quoted phrases, in the title, the description,
//! the department and the company's name), the repeatable filters, the sorts, the facets, the
//! pagination bound, the visibility of jobs, and one fixed data set whose answers both backends
//! must give alike.

use careers_api::models::{careers, org};
use chrono::{DateTime, Duration, Utc};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};

use crate::backend_tests;
use crate::fixtures::*;
use crate::helpers::*;

const JOBS: &str = "/org-user/careers/jobs";
const MARKETPLACE: &str = "/marketplace/careers/jobs";

/// Opens a job through the employer's `POST` one second after the previous one (so
/// `published_at` orders them): an on-site full-time job in Germany with the given attributes on top.
async fn open_job(app: &TestApp, boss: &Creds, company: i64, extra: Value) -> i64 {
    app.clock.advance(1);
    let mut form = json!({"title": "Job", "description": "About", "status": "open",
                          "workplace_type": "on_site", "employment_type": "full_time",
                          "country_code": "DE", "company": {"id": company}});
    for (key, value) in extra.as_object().unwrap() {
        form[key] = value.clone();
    }
    let body = json(post(app, boss, JOBS, &form).await, StatusCode::CREATED).await;
    assert_eq!(body["careers_jobs"]["status"], "open", "{body}");
    body["careers_jobs"]["id"].as_i64().unwrap()
}

async fn set_published(app: &TestApp, id: i64, at: DateTime<Utc>) {
    careers::job::entity::ActiveModel {
        id: Set(id),
        published_at: Set(Some(at)),
        ..Default::default()
    }
    .update(&*app.state.db)
    .await
    .unwrap();
}

async fn suspend(app: &TestApp, company: i64) {
    org::company::entity::ActiveModel {
        id: Set(company),
        suspended_at: Set(Some(Utc::now())),
        ..Default::default()
    }
    .update(&*app.state.db)
    .await
    .unwrap();
}

/// The answer to `GET /marketplace/careers/jobs?{query}`, 200.
async fn search(app: &TestApp, query: &str) -> Value {
    let path = format!("{MARKETPLACE}?{query}");
    let body = ok(get_anon(app, &path).await).await;
    assert_eq!(keys(&body), ["careers_jobs", "meta"], "{path}: {body}");
    body
}

/// The ids found by `query`, in order; asserts that `meta.total` is their number (one page).
async fn found(app: &TestApp, query: &str) -> Vec<i64> {
    let body = search(app, query).await;
    let list = ids(&body["careers_jobs"]);
    assert_eq!(body["meta"]["total"], json!(list.len()), "{query}: {body}");
    list
}

async fn expect_bad(app: &TestApp, query: &str) {
    let path = format!("{MARKETPLACE}?{query}");
    let response = get_anon(app, &path).await;
    expect_error(response, StatusCode::BAD_REQUEST, "malformed_request").await;
}

fn no_facets() -> Value {
    json!({"workplace_type": {}, "employment_type": {}, "country_code": {}})
}

/// One row of the shared table: the query, the expected jobs (1-based indices into the data
/// set, in order), the total, and the facets (`None`: not checked for that row).
struct Case {
    query: String,
    jobs: Vec<usize>,
    total: u64,
    facets: Option<Value>,
}

fn case(query: &str, jobs: &[usize], total: u64, facets: Option<Value>) -> Case {
    Case {
        query: query.to_owned(),
        jobs: jobs.to_vec(),
        total,
        facets,
    }
}

backend_tests! {
    async fn q_is_case_and_accent_insensitive_whole_words_and_phrases(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let dev = open_job(&app, &boss, acme, json!({"title": "Développeur Rust",
                                                        "description": "Write services."})).await;
        let senior = open_job(&app, &boss, acme, json!({"title": "Senior platform lead",
                                                           "description": "Keep the lights on."})).await;
        let reversed = open_job(&app, &boss, acme, json!({"title": "Platform senior lead",
                                                             "description": "Quiet work."})).await;
        let described = open_job(&app, &boss, acme, json!({"title": "Operator",
                                                              "description": "Maintain our Kubernetes clusters."})).await;
        let departed = open_job(&app, &boss, acme, json!({"title": "Clerk", "description": "Files.",
                                                             "department": "Logistique"})).await;

        for q in ["developpeur", "D%C3%89VELOPPEUR", "rust", "RuSt", "d%C3%A9veloppeur%20rust"] {
            assert_eq!(found(&app, &format!("q={q}")).await, [dev], "q={q}");
        }
        // Whole words only.
        for q in ["rus", "develop", "kube"] {
            assert_eq!(found(&app, &format!("q={q}")).await, Vec::<i64>::new(), "q={q}");
        }
        // Every word must match.
        assert_eq!(found(&app, "q=rust%20senior").await, Vec::<i64>::new());
        // Words in any order without quotes; a phrase only adjacent and in order.
        assert_eq!(found(&app, "q=senior%20platform&sort=newest").await, [reversed, senior]);
        assert_eq!(found(&app, "q=%22senior%20platform%22").await, [senior]);
        assert_eq!(found(&app, "q=%22platform%20senior%22").await, [reversed]);
        assert_eq!(found(&app, "q=%22lead%20senior%22").await, Vec::<i64>::new());
        assert_eq!(found(&app, "q=%22SENIOR%20Platform%22%20lead").await, [senior]);
        // The description, the department, the company's name.
        assert_eq!(found(&app, "q=kubernetes").await, [described]);
        assert_eq!(found(&app, "q=logistique").await, [departed]);
        assert_eq!(found(&app, "q=acme").await, [departed, described, reversed, senior, dev]);

        // A rename is searched by its new name, no longer by the old one.
        let renamed = patch(&app, &boss, "/org/company", &json!({"name": "Société Lumière"})).await;
        ok(renamed).await;
        assert_eq!(found(&app, "q=acme").await, Vec::<i64>::new());
        assert_eq!(found(&app, "q=lumiere%20societe").await, [departed, described, reversed, senior, dev]);
        assert_eq!(found(&app, "q=%22soci%C3%A9t%C3%A9%20LUMI%C3%88RE%22%20rust").await, [dev]);

        // An edit is searched as edited.
        let edit = json!({"title": "Ingénieur Go", "department": "Plateforme"});
        ok(patch(&app, &boss, &format!("{JOBS}/{dev}"), &edit).await).await;
        assert_eq!(found(&app, "q=rust").await, Vec::<i64>::new());
        assert_eq!(found(&app, "q=INGENIEUR%20go%20plateforme%20services").await, [dev]);

        // No letter or digit: ignored (every open job, newest first).
        let all = vec![departed, described, reversed, senior, dev];
        for q in ["%21%21", "%22%22", "%20", "", "%2D%2A%22"] {
            assert_eq!(found(&app, &format!("q={q}")).await, all, "q={q}");
        }
        // At most 200 characters.
        let long = "a".repeat(200);
        assert_eq!(found(&app, &format!("q={long}")).await, Vec::<i64>::new());
        expect_bad(&app, &format!("q={long}a")).await;
        let accents = "é".repeat(200);
        assert_eq!(found(&app, &format!("q={}", accents.replace('é', "%C3%A9"))).await, Vec::<i64>::new());
    }

    async fn relevance_ranks_title_matches_first_and_newest_is_the_default_without_q(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let old_title = open_job(&app, &boss, acme, json!({"title": "Rust engineer"})).await;
        let old_body = open_job(&app, &boss, acme, json!({"title": "Engineer", "description": "Some Rust."})).await;
        let new_title = open_job(&app, &boss, acme, json!({"title": "Rust lead"})).await;
        let new_body = open_job(&app, &boss, acme, json!({"title": "Lead", "description": "Rust daily."})).await;
        let other = open_job(&app, &boss, acme, json!({"title": "Designer"})).await;

        assert_eq!(found(&app, "").await, [other, new_body, new_title, old_body, old_title]);
        assert_eq!(found(&app, "sort=newest").await, [other, new_body, new_title, old_body, old_title]);
        assert_eq!(found(&app, "q=rust").await, [new_title, old_title, new_body, old_body]);
        assert_eq!(found(&app, "q=rust&sort=relevance").await, [new_title, old_title, new_body, old_body]);
        assert_eq!(found(&app, "q=rust&sort=newest").await, [new_body, new_title, old_body, old_title]);
        // Every word in the title ranks it first; a word elsewhere does not.
        assert_eq!(found(&app, "q=rust%20lead").await, [new_title, new_body]);
        assert_eq!(found(&app, "q=rust%20engineer").await, [old_title, old_body]);

        // Equal published_at: id descending.
        let same = app.state.now();
        for id in [old_title, old_body, new_title, new_body, other] {
            set_published(&app, id, same).await;
        }
        let mut by_id = vec![old_title, old_body, new_title, new_body, other];
        by_id.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(found(&app, "").await, by_id);

        for query in ["sort=bogus", "q=rust&sort=bogus", "sort=", "sort=NEWEST"] {
            expect_bad(&app, query).await;
        }
    }

    async fn parameters_out_of_bounds_are_400(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let id = open_job(&app, &boss, acme, json!({"title": "Rust engineer"})).await;
        for query in [
            "workplace_type=moon",
            "workplace_type=remote&workplace_type=moon",
            "employment_type=forever",
            "country_code=XX",
            "country_code=de",
            "country_code=DEU",
            "salary_min=100",
            "salary_min=100&salary_currency=EUR",
            "salary_min=100&salary_interval=year",
            "salary_currency=EUR&salary_interval=year",
            "salary_min=100&salary_currency=XYZ&salary_interval=year",
            "salary_min=100&salary_currency=EUR&salary_interval=fortnight",
            "posted_since=yesterday",
            "company_id=acme",
            "page=101&per_page=100",
            "page=10001&per_page=1",
            "page=401",
        ] {
            expect_bad(&app, query).await;
        }
        // At the bound: 200 with an empty page.
        for (query, page, per_page) in [("page=100&per_page=100", 100, 100), ("page=400", 400, 25),
                                        ("page=10000&per_page=1", 10_000, 1)] {
            let body = search(&app, query).await;
            assert_eq!(ids(&body["careers_jobs"]), Vec::<i64>::new(), "{query}");
            assert_eq!(body["meta"]["page"], page, "{query}");
            assert_eq!(body["meta"]["per_page"], per_page, "{query}");
            assert_eq!(body["meta"]["total"], 1, "{query}");
        }
        let body = search(&app, "").await;
        assert_eq!(keys(&body["meta"]), ["facets", "page", "per_page", "total"], "{body}");
        assert_eq!((&body["meta"]["page"], &body["meta"]["per_page"]), (&json!(1), &json!(25)));
        assert_eq!(ids(&body["careers_jobs"]), [id]);
        assert_eq!(body["careers_jobs"][0]["company"], json!({"id": acme, "name": "Acme"}), "{body}");
    }

    async fn only_open_jobs_of_unsuspended_companies_are_searched_or_counted(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let globex = company(&app, "Globex").await;
        let (_, boss) = employer(&app, "boss@acme.example", acme).await;
        let (_, globex_boss) = employer(&app, "boss@globex.example", globex).await;
        let open = open_job(&app, &boss, acme, json!({"title": "Rust engineer"})).await;
        let draft = json!({"title": "Rust draft", "description": "About", "workplace_type": "remote",
                           "employment_type": "part_time", "company": {"id": acme}});
        json(post(&app, &boss, JOBS, &draft).await, StatusCode::CREATED).await;
        let closed = open_job(&app, &boss, acme, json!({"title": "Rust closed", "workplace_type": "hybrid",
                                                           "country_code": "FR"})).await;
        ok(patch(&app, &boss, &format!("{JOBS}/{closed}"), &json!({"status": "closed"})).await).await;
        open_job(&app, &globex_boss, globex, json!({"title": "Rust suspended", "workplace_type": "remote",
                                                      "employment_type": "contractor", "country_code": "AT"})).await;
        suspend(&app, globex).await;

        let facets = json!({"workplace_type": {"on_site": 1}, "employment_type": {"full_time": 1},
                            "country_code": {"DE": 1}});
        for query in ["", "q=rust", "q=rust&sort=newest", "q=globex", "workplace_type=remote",
                      "country_code=AT&country_code=FR", "employment_type=contractor"] {
            let body = search(&app, query).await;
            let expected = if matches!(query, "" | "q=rust" | "q=rust&sort=newest") { vec![open] } else { vec![] };
            assert_eq!(ids(&body["careers_jobs"]), expected, "{query}: {body}");
            assert_eq!(body["meta"]["total"], json!(expected.len()), "{query}: {body}");
            if !expected.is_empty() {
                assert_eq!(body["meta"]["facets"], facets, "{query}: {body}");
            }
        }
        // The facets of another choice never count hidden jobs either.
        let body = search(&app, "workplace_type=remote").await;
        assert_eq!(body["meta"]["facets"],
                   json!({"workplace_type": {"on_site": 1}, "employment_type": {}, "country_code": {}}),
                   "{body}");
        let body = search(&app, "country_code=AT").await;
        assert_eq!(body["meta"]["facets"],
                   json!({"workplace_type": {}, "employment_type": {}, "country_code": {"DE": 1}}),
                   "{body}");
    }

    async fn both_backends_answer_the_same_table(backend) {
        let app = TestApp::spawn(backend).await;
        let acme = company(&app, "Acme").await;
        let zurich = company(&app, "Zürich Bank").await;
        let hidden = company(&app, "Hidden Rust Corp").await;
        let (_, a) = employer(&app, "boss@acme.example", acme).await;
        let (_, z) = employer(&app, "boss@zurich.example", zurich).await;
        let (_, h) = employer(&app, "boss@hidden.example", hidden).await;
        let eur_year = |min: Value, max: Value| json!({"salary_min": min, "salary_max": max,
                                                       "salary_currency": "EUR", "salary_interval": "year"});
        let with = |base: Value, extra: Value| {
            let mut merged = base;
            for (key, value) in extra.as_object().unwrap() {
                merged[key] = value.clone();
            }
            merged
        };
        // (company, form): published one day apart, in this order (job 1 is the oldest).
        let data = [
            (acme, &a, with(json!({"title": "Développeur Rust", "description": "Build the Rust platform in Berlin.",
                                   "department": "Engineering"}), eur_year(json!(60_000), json!(80_000)))),
            (acme, &a, with(json!({"title": "Senior Backend Engineer", "description": "Write Rust services and review code.",
                                   "department": "Platform", "workplace_type": "remote", "country_code": null}),
                            eur_year(json!(90_000), Value::Null))),
            (zurich, &z, json!({"title": "Data Analyst", "description": "SQL and dashboards for the bank.",
                                "department": "Finance", "workplace_type": "hybrid", "employment_type": "part_time",
                                "country_code": "CH", "salary_min": 40, "salary_max": 60,
                                "salary_currency": "CHF", "salary_interval": "hour"})),
            (zurich, &z, json!({"title": "Rust Developer", "description": "Low latency trading in Zürich.",
                                "department": "Trading", "employment_type": "contractor", "country_code": "CH"})),
            (acme, &a, with(json!({"title": "Ingénieur Qualité", "description": "Quality work for rust-free steel.",
                                   "country_code": "FR"}), eur_year(json!(45_000), json!(55_000)))),
            (acme, &a, with(json!({"title": "Product Manager", "description": "Senior product role; work with engineers.",
                                   "workplace_type": "remote", "country_code": "PT"}), eur_year(json!(70_000), Value::Null))),
            (zurich, &z, with(json!({"title": "Engineering Manager", "description": "Lead a team of senior engineers.",
                                     "department": "Engineering", "workplace_type": "hybrid"}),
                              eur_year(json!(100_000), json!(120_000)))),
            (acme, &a, json!({"title": "Designer", "description": "Design the ZÜRICH office app.",
                              "workplace_type": "remote", "employment_type": "part_time", "country_code": null})),
            (zurich, &z, json!({"title": "Support Engineer", "description": "Help customers, rust knowledge welcome.",
                                "employment_type": "temporary", "country_code": "AT", "salary_min": 3_000,
                                "salary_max": 3_500, "salary_currency": "EUR", "salary_interval": "month"})),
            (acme, &a, with(json!({"title": "Backend Engineer Senior", "description": "Go and Python.",
                                   "employment_type": null, "country_code": "AT"}), eur_year(json!(80_000), json!(85_000)))),
            (acme, &a, json!({"title": "Data Scientist", "description": "Machine learning, senior data work.",
                              "workplace_type": "hybrid"})),
            (zurich, &z, json!({"title": "Développeuse Front-end", "description": "TypeScript and CSS.",
                                "employment_type": "intern", "country_code": "CH"})),
        ];
        let mut jobs = vec![0i64]; // 1-based
        let mut published = vec![String::new()];
        // Job k published k days after `base` (written straight: advancing the clock by days
        // would expire the employers' sessions).
        let base = app.state.now() - Duration::days(20);
        for (k, (company, boss, form)) in data.iter().enumerate() {
            let id = open_job(&app, boss, *company, form.clone()).await;
            let at = base + Duration::days(k as i64 + 1);
            set_published(&app, id, at).await;
            jobs.push(id);
            published.push(at.date_naive().format("%Y-%m-%d").to_string());
        }
        // Never found: a draft, a closed job, an open job of a suspended company.
        let draft = json!({"title": "Rust draft", "description": "Rust in Zürich", "company": {"id": acme},
                           "workplace_type": "remote", "employment_type": "volunteer", "country_code": "IT"});
        json(post(&app, &a, JOBS, &draft).await, StatusCode::CREATED).await;
        let closed = open_job(&app, &z, zurich, json!({"title": "Rust closed", "employment_type": "other",
                                                         "country_code": "CH"})).await;
        ok(patch(&app, &z, &format!("{JOBS}/{closed}"), &json!({"status": "closed"})).await).await;
        open_job(&app, &h, hidden, json!({"title": "Senior Rust Data Engineer", "workplace_type": "hybrid",
                                          "employment_type": "per_diem", "country_code": "ES",
                                          "salary_min": 1, "salary_max": 999_999, "salary_currency": "EUR",
                                          "salary_interval": "year"})).await;
        suspend(&app, hidden).await;

        let all_facets = json!({
            "workplace_type": {"on_site": 6, "remote": 3, "hybrid": 3},
            "employment_type": {"full_time": 6, "part_time": 2, "contractor": 1, "temporary": 1, "intern": 1},
            "country_code": {"DE": 3, "CH": 3, "FR": 1, "PT": 1, "AT": 2},
        });
        let newest: Vec<usize> = (1..=12).rev().collect();
        let table = [
            case("", &newest, 12, Some(all_facets.clone())),
            case("q=%21%21", &newest, 12, Some(all_facets.clone())),
            case("per_page=5&page=3", &[2, 1], 12, Some(all_facets.clone())),
            case("q=rust", &[4, 1, 9, 5, 2], 5, Some(json!({
                "workplace_type": {"on_site": 4, "remote": 1},
                "employment_type": {"full_time": 3, "contractor": 1, "temporary": 1},
                "country_code": {"DE": 1, "CH": 1, "FR": 1, "AT": 1},
            }))),
            case("q=RUST&sort=newest", &[9, 5, 4, 2, 1], 5, None),
            case("q=rust&per_page=2&page=2", &[9, 5], 5, None),
            case("q=rus", &[], 0, Some(no_facets())),
            case("q=D%C3%89VELOPPEUR", &[1], 1, None),
            case("q=developpeuse", &[12], 1, None),
            case("q=senior", &[10, 2, 11, 7, 6], 5, None),
            case("q=senior%20backend", &[10, 2], 2, None),
            case("q=%22senior%20backend%22", &[2], 1, None),
            case("q=%22backend%20senior%22", &[], 0, None),
            // A phrase does not run from the title into the description.
            case("q=%22engineer%20write%22", &[], 0, Some(no_facets())),
            case("q=%22low%20latency%22%20trading", &[4], 1, None),
            case("q=zurich", &[12, 9, 8, 7, 4, 3], 6, Some(json!({
                "workplace_type": {"on_site": 3, "hybrid": 2, "remote": 1},
                "employment_type": {"part_time": 2, "contractor": 1, "full_time": 1, "temporary": 1, "intern": 1},
                "country_code": {"CH": 3, "DE": 1, "AT": 1},
            }))),
            case("q=z%C3%BCrich&workplace_type=on_site&workplace_type=hybrid", &[12, 9, 7, 4, 3], 5, Some(json!({
                "workplace_type": {"on_site": 3, "hybrid": 2, "remote": 1},
                "employment_type": {"part_time": 1, "contractor": 1, "full_time": 1, "temporary": 1, "intern": 1},
                "country_code": {"CH": 3, "DE": 1, "AT": 1},
            }))),
            case("q=acme", &[11, 10, 8, 6, 5, 2, 1], 7, None),
            case("country_code=DE&country_code=AT", &[11, 10, 9, 7, 1], 5, Some(json!({
                "workplace_type": {"on_site": 3, "hybrid": 2},
                "employment_type": {"full_time": 3, "temporary": 1},
                "country_code": {"DE": 3, "CH": 3, "FR": 1, "PT": 1, "AT": 2},
            }))),
            // Two facets filtered: each facet counts the jobs passing the other one's filter.
            case("country_code=DE&country_code=CH&workplace_type=on_site&workplace_type=hybrid",
                 &[12, 11, 7, 4, 3, 1], 6, Some(json!({
                "workplace_type": {"on_site": 3, "hybrid": 3},
                "employment_type": {"full_time": 3, "part_time": 1, "contractor": 1, "intern": 1},
                "country_code": {"DE": 3, "CH": 3, "FR": 1, "AT": 2},
            }))),
            case("workplace_type=remote", &[8, 6, 2], 3, Some(json!({
                "workplace_type": {"on_site": 6, "remote": 3, "hybrid": 3},
                "employment_type": {"full_time": 2, "part_time": 1},
                "country_code": {"PT": 1},
            }))),
            case(&format!("employment_type=part_time&employment_type=contractor&company_id={zurich}"), &[4, 3], 2,
                 Some(json!({
                     "workplace_type": {"hybrid": 1, "on_site": 1},
                     "employment_type": {"part_time": 1, "contractor": 1, "full_time": 1, "temporary": 1, "intern": 1},
                     "country_code": {"CH": 2},
                 }))),
            case(&format!("company_id={acme}&company_id={hidden}&q=data"), &[11], 1, None),
            case("salary_min=80000&salary_currency=EUR&salary_interval=year", &[10, 7, 2, 1], 4, Some(json!({
                "workplace_type": {"on_site": 2, "remote": 1, "hybrid": 1},
                "employment_type": {"full_time": 3},
                "country_code": {"DE": 2, "AT": 1},
            }))),
            case("salary_min=80001&salary_currency=EUR&salary_interval=year", &[10, 7, 2], 3, None),
            case("salary_min=50&salary_currency=CHF&salary_interval=hour", &[3], 1, None),
            case("salary_min=3000&salary_currency=EUR&salary_interval=year", &[10, 7, 6, 5, 2, 1], 6, None),
            case(&format!("posted_since={}", published[10]), &[12, 11, 10], 3, None),
            case(&format!("posted_since={}&q=senior", published[10]), &[10, 11], 2, None),
            case("q=data&employment_type=full_time", &[11], 1, Some(json!({
                "workplace_type": {"hybrid": 1},
                "employment_type": {"part_time": 1, "full_time": 1},
                "country_code": {"DE": 1},
            }))),
        ];
        let mut failures = Vec::new();
        for Case { query, jobs: expected, total, facets } in &table {
            let body = search(&app, query).await;
            let expected: Vec<i64> = expected.iter().map(|&n| jobs[n]).collect();
            let actual = ids(&body["careers_jobs"]);
            let as_numbers = |list: &[i64]| -> Vec<usize> {
                list.iter().map(|id| jobs.iter().position(|j| j == id).unwrap_or(0)).collect()
            };
            if actual != expected {
                failures.push(format!("{query}: jobs {:?}, expected {:?}", as_numbers(&actual), as_numbers(&expected)));
            }
            if body["meta"]["total"] != json!(total) {
                failures.push(format!("{query}: total {}, expected {total}", body["meta"]["total"]));
            }
            if let Some(facets) = facets
                && &body["meta"]["facets"] != facets
            {
                failures.push(format!("{query}: facets {}, expected {facets}", body["meta"]["facets"]));
            }
        }
        assert!(failures.is_empty(), "{backend:?}:\n{}", failures.join("\n"));
    }
}
