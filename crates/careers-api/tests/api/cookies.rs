//! Cookie attributes per environment (specification §2.5, CONTRACT §2).

use careers_api::areas::{ADMIN, USER};
use reqwest::{Method, StatusCode};
use serde_json::json;
use sessions::SessionContext;

use crate::backend_tests;
use crate::helpers::*;
use crate::session_lifecycle::httpdate;

struct Case {
    env: &'static [(&'static str, &'static str)],
    secure: bool,
    same_site: &'static str,
    /// Expected Domain for Host `localhost:3000`, `127.0.0.1:3000`, `api.example.com`.
    domains: [Option<&'static str>; 3],
}

const HOSTS: [&str; 3] = ["localhost:3000", "127.0.0.1:3000", "api.example.com"];

const CASES: &[Case] = &[
    Case {
        env: &[("APP_ENV", "development")],
        secure: false,
        same_site: "Lax",
        domains: [None, None, Some(".example.com")],
    },
    Case {
        env: &[("APP_ENV", "test")],
        secure: true,
        same_site: "None",
        domains: [None, None, Some(".example.com")],
    },
    Case {
        env: &[("APP_ENV", "staging")],
        secure: true,
        same_site: "None",
        domains: [None, None, Some(".example.com")],
    },
    Case {
        env: &[
            ("APP_ENV", "production"),
            ("COOKIE_DOMAIN", ".careers.example"),
        ],
        secure: true,
        same_site: "None",
        domains: [Some(".careers.example"); 3],
    },
    Case {
        env: &[("APP_ENV", "qa"), ("COOKIE_DOMAIN", ".qa-careers.example")],
        secure: true,
        same_site: "None",
        domains: [Some(".qa-careers.example"); 3],
    },
];

async fn login_with_host(
    app: &TestApp,
    ctx: &SessionContext,
    email: &str,
    host: &str,
) -> reqwest::Response {
    let response = app
        .request(Method::POST, session_path(ctx))
        .header("host", host)
        .json(&json!({ "email": email, "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response
}

fn assert_attributes(cookie: &SetCookie, case: &Case, domain: Option<&str>, http_only: bool) {
    let env = case.env[0].1;
    assert_eq!(cookie.value_of("Path"), Some("/"), "{env} {}", cookie.name);
    assert_eq!(
        cookie.has("HttpOnly"),
        http_only,
        "{env} {} HttpOnly",
        cookie.name
    );
    assert_eq!(
        cookie.has("Secure"),
        case.secure,
        "{env} {} Secure",
        cookie.name
    );
    assert_eq!(
        cookie.value_of("SameSite"),
        Some(case.same_site),
        "{env} {} SameSite",
        cookie.name
    );
    assert_eq!(
        cookie.value_of("Domain"),
        domain,
        "{env} {} Domain",
        cookie.name
    );
    assert!(!cookie.has("Partitioned"), "{env} {}", cookie.name);
}

backend_tests! {
    async fn login_sets_exactly_the_two_cookies_of_its_context_in_every_environment(backend) {
        for case in CASES {
            let app = TestApp::spawn_with(backend, case.env).await;
            app.create_user("ada@example.com").await;
            app.create_admin("grace@example.com").await;
            for (ctx, email) in [(USER, "ada@example.com"), (ADMIN, "grace@example.com")] {
                for (host, domain) in HOSTS.iter().zip(case.domains) {
                    let login_time = sessions::Clock::now(&*app.clock);
                    let response = login_with_host(&app, &ctx, email, host).await;
                    let cookies = set_cookies(&response);
                    assert_eq!(cookies.len(), 2, "exactly two cookies");
                    let access = cookies.iter().find(|c| c.name == ctx.access_cookie).expect("access cookie");
                    let csrf = cookies.iter().find(|c| c.name == ctx.csrf_cookie).expect("csrf cookie");
                    assert_attributes(access, case, domain, true);
                    assert_attributes(csrf, case, domain, false);
                    let week = httpdate(login_time + 7 * 24 * 3600);
                    assert_eq!(access.value_of("Expires"), Some(week.as_str()));
                    assert_eq!(csrf.value_of("Expires"), Some(week.as_str()));

                    // Logout deletes them with the same Path and Domain.
                    let creds = Creds::from_response(&ctx, &response);
                    let logout = creds
                        .with_csrf(app.request(Method::DELETE, &current_path(&ctx)))
                        .header("host", *host)
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(logout.status(), StatusCode::NO_CONTENT);
                    for cookie in set_cookies(&logout) {
                        assert_eq!(cookie.value_of("Domain"), domain, "deletion Domain");
                        assert_eq!(cookie.value_of("Path"), Some("/"));
                        assert_eq!(cookie.value_of("Max-Age"), Some("0"));
                        assert_eq!(cookie.has("Secure"), case.secure);
                    }
                }
            }
        }
    }

    async fn cookie_domain_is_the_registrable_domain_of_a_multi_label_suffix(backend) {
        // CONTRACT §8: the Public Suffix List, not the last two labels (`.co.uk`).
        for env in ["development", "test"] {
            let app = TestApp::spawn_with(backend, &[("APP_ENV", env)]).await;
            app.create_user("ada@example.com").await;
            app.create_admin("grace@example.com").await;
            for (ctx, email) in [(USER, "ada@example.com"), (ADMIN, "grace@example.com")] {
                for host in ["api.example.co.uk", "API.Example.CO.UK:8443"] {
                    let response = login_with_host(&app, &ctx, email, host).await;
                    let cookies = set_cookies(&response);
                    assert_eq!(cookies.len(), 2, "{env} {host}: exactly two cookies");
                    for name in [ctx.access_cookie, ctx.csrf_cookie] {
                        let cookie = cookies.iter().find(|c| c.name == name).expect("cookie");
                        assert_eq!(cookie.value_of("Domain"), Some(".example.co.uk"),
                                   "{env} {host} {name}");
                    }
                }
                // A host that is itself a public suffix gets host-only cookies.
                let response = login_with_host(&app, &ctx, email, "co.uk").await;
                for cookie in set_cookies(&response) {
                    assert_eq!(cookie.value_of("Domain"), None, "{env} co.uk {}", cookie.name);
                }
            }
        }
    }

    async fn partitioned_is_added_only_for_the_named_context(backend) {
        let app = TestApp::spawn_with(backend, &[("COOKIE_PARTITIONED", "admin")]).await;
        app.create_user("ada@example.com").await;
        app.create_admin("grace@example.com").await;
        let admin = login_with_host(&app, &ADMIN, "grace@example.com", "api.example.com").await;
        let admin_creds = Creds::from_response(&ADMIN, &admin);
        for cookie in set_cookies(&admin) {
            assert!(cookie.has("Partitioned") && cookie.has("Secure"), "{}", cookie.name);
        }
        let user = login_with_host(&app, &USER, "ada@example.com", "api.example.com").await;
        for cookie in set_cookies(&user) {
            assert!(!cookie.has("Partitioned"), "{}", cookie.name);
        }
        let logout = app.logout(&admin_creds).await;
        assert_eq!(logout.status(), StatusCode::NO_CONTENT);
        let deleted = set_cookies(&logout);
        assert_eq!(deleted.len(), 2);
        for cookie in deleted {
            assert!(cookie.has("Partitioned"), "deleting a partitioned cookie needs Partitioned");
        }
    }
}
