//! The one place that knows each environment's cookie policy and writes `Set-Cookie` values,
//! through the `cookie` crate.

use cookie::Cookie;
use cookie::time::{Duration, OffsetDateTime};
use http::{HeaderMap, HeaderValue, header};
use std::net::IpAddr;

use crate::SessionContext;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SameSite {
    Lax,
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CookieDomain {
    /// A configured parent domain (production, qa), as given (`.example.com`; the header carries
    /// it without the leading dot).
    Fixed(String),
    /// Rails' `domain: :all`, with the Public Suffix List: `.` + the registrable domain of the
    /// request's Host (`api.example.co.uk` → `.example.co.uk`); no Domain attribute for an IP
    /// address, a single-label host or a host that is itself a public suffix.
    FromHost,
}

#[derive(Debug, Clone)]
pub struct CookiePolicy {
    pub secure: bool,
    pub same_site: SameSite,
    pub domain: CookieDomain,
    /// Names of the contexts whose cookies also carry `Partitioned` (CHIPS).
    pub partitioned: Vec<String>,
}

impl CookiePolicy {
    /// The access cookie (HttpOnly) and the CSRF cookie (JS-readable), both ending with the session.
    pub fn issue(
        &self,
        context: &SessionContext,
        host: Option<&str>,
        access_token: &str,
        csrf: &str,
        session_expires_at: i64,
    ) -> [HeaderValue; 2] {
        let expires = OffsetDateTime::from_unix_timestamp(session_expires_at)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        [
            self.build(
                context,
                host,
                context.access_cookie,
                access_token,
                expires,
                true,
                false,
            ),
            self.build(
                context,
                host,
                context.csrf_cookie,
                csrf,
                expires,
                false,
                false,
            ),
        ]
    }

    /// Deletes both cookies of a context: same name, Path and Domain, empty value, `Max-Age=0`
    /// and `Expires` at the epoch.
    pub fn clear(&self, context: &SessionContext, host: Option<&str>) -> [HeaderValue; 2] {
        let expires = OffsetDateTime::UNIX_EPOCH;
        [
            self.build(
                context,
                host,
                context.access_cookie,
                "",
                expires,
                true,
                true,
            ),
            self.build(context, host, context.csrf_cookie, "", expires, false, true),
        ]
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        &self,
        context: &SessionContext,
        host: Option<&str>,
        name: &str,
        value: &str,
        expires: OffsetDateTime,
        http_only: bool,
        delete: bool,
    ) -> HeaderValue {
        // `secure` is always set explicitly: left unset, the crate would add `Secure` to any
        // `SameSite=None` cookie by itself.
        let mut cookie = Cookie::build((name, value))
            .path("/")
            .expires(expires)
            .http_only(http_only)
            .secure(self.secure)
            .same_site(match self.same_site {
                SameSite::Lax => cookie::SameSite::Lax,
                SameSite::None => cookie::SameSite::None,
            })
            .partitioned(self.partitioned.iter().any(|c| c == context.name));
        if delete {
            cookie = cookie.max_age(Duration::ZERO);
        }
        let mut text = cookie.build().to_string();
        // The Domain is written as the contract shows it (`.example.com`, CONTRACT §2), which
        // the crate cannot: it drops a leading dot. User agents read both alike (RFC 6265
        // §5.2.3); the oracle test below parses it back with the crate.
        if let Some(domain) = self.domain_for(host) {
            text.push_str("; Domain=");
            text.push_str(&domain);
        }
        // Names are static, values are base64url tokens and dates: always a valid header value.
        HeaderValue::try_from(text).expect("cookie built from token characters only")
    }

    pub fn domain_for(&self, host: Option<&str>) -> Option<String> {
        match &self.domain {
            CookieDomain::Fixed(domain) => Some(domain.clone()),
            CookieDomain::FromHost => host.and_then(parent_domain_of_host),
        }
    }
}

/// `.` + the registrable domain (the public suffix and one label before it, by the Public Suffix
/// List built into `psl`) of a Host header value, without its port: `api.example.co.uk` →
/// `.example.co.uk`, `api.example.com` → `.example.com`. `None` for an IP address, a single-label
/// host, a host that is itself a public suffix (`co.uk`, `github.io`), or anything that is not a
/// plain DNS name. A name under a suffix the list does not know (`api.example.internal`) takes
/// its last label as the suffix, the list's default rule.
pub fn parent_domain_of_host(host: &str) -> Option<String> {
    let host = host.trim();
    if host.starts_with('[') {
        return None; // IPv6 literal
    }
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        Some(_) => return None,
        None => host,
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name.is_empty()
        || name.parse::<IpAddr>().is_ok()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        || name.split('.').any(str::is_empty)
    {
        return None;
    }
    // `None` for a public suffix itself and for a single label (the default rule `*` makes any
    // last label a suffix).
    let domain = psl::domain_str(&name)?;
    Some(format!(".{domain}"))
}

/// The value of cookie `name` from the request's `Cookie` headers, if present and non-empty
/// (surrounding double quotes removed), parsed by the `cookie` crate.
pub fn read_cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|pair| pair.name() == name)
        .and_then(|pair| pair.value_raw())
        .map(|value| value.trim_matches('"'))
        .filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_domain_is_the_registrable_domain() {
        assert_eq!(
            parent_domain_of_host("api.example.com").as_deref(),
            Some(".example.com")
        );
        assert_eq!(
            parent_domain_of_host("API.Example.com:8443").as_deref(),
            Some(".example.com")
        );
        assert_eq!(
            parent_domain_of_host("example.com").as_deref(),
            Some(".example.com")
        );
        // The Public Suffix List, not the last two labels.
        assert_eq!(
            parent_domain_of_host("api.example.co.uk").as_deref(),
            Some(".example.co.uk")
        );
        assert_eq!(
            parent_domain_of_host("example.co.uk:443").as_deref(),
            Some(".example.co.uk")
        );
        assert_eq!(
            parent_domain_of_host("a.b.example.com.au").as_deref(),
            Some(".example.com.au")
        );
        assert_eq!(
            parent_domain_of_host("me.github.io").as_deref(),
            Some(".me.github.io")
        );
        assert_eq!(
            parent_domain_of_host("api.example.internal").as_deref(),
            Some(".example.internal")
        );
        assert_eq!(
            parent_domain_of_host("example.com.").as_deref(),
            Some(".example.com")
        );
        // A public suffix itself has no registrable domain: a host-only cookie.
        for suffix in ["co.uk", "CO.UK:8080", "com", "github.io", "com.au"] {
            assert_eq!(parent_domain_of_host(suffix), None, "{suffix}");
        }
        assert_eq!(parent_domain_of_host("localhost"), None);
        assert_eq!(parent_domain_of_host("localhost:3000"), None);
        assert_eq!(parent_domain_of_host("127.0.0.1:3000"), None);
        assert_eq!(parent_domain_of_host("127.0.0.1"), None);
        assert_eq!(parent_domain_of_host("10.1.2.3:8080"), None);
        assert_eq!(parent_domain_of_host("[::1]:3000"), None);
        assert_eq!(parent_domain_of_host("[2001:db8::1]"), None);
        assert_eq!(parent_domain_of_host("2001:db8::1"), None);
        assert_eq!(parent_domain_of_host("example.com:port"), None);
        assert_eq!(parent_domain_of_host("api..example.com"), None);
        assert_eq!(parent_domain_of_host(".example.com"), None);
        assert_eq!(parent_domain_of_host("evil.com;x=y"), None);
        assert_eq!(parent_domain_of_host(""), None);
    }

    use crate::context::examples::{ADMIN, USER};

    /// The policies of CONTRACT §2: development, any other environment, production and qa,
    /// and the admin context partitioned.
    fn policies() -> [CookiePolicy; 4] {
        [
            CookiePolicy {
                secure: false,
                same_site: SameSite::Lax,
                domain: CookieDomain::FromHost,
                partitioned: Vec::new(),
            },
            CookiePolicy {
                secure: true,
                same_site: SameSite::None,
                domain: CookieDomain::FromHost,
                partitioned: Vec::new(),
            },
            CookiePolicy {
                secure: true,
                same_site: SameSite::None,
                domain: CookieDomain::Fixed(".careers.example".into()),
                partitioned: Vec::new(),
            },
            CookiePolicy {
                secure: true,
                same_site: SameSite::None,
                domain: CookieDomain::FromHost,
                partitioned: vec!["admin".into()],
            },
        ]
    }

    /// An oracle against the `cookie` crate's parser: every header the policies emit, setting and
    /// deleting, read back attribute by attribute.
    #[test]
    fn every_emitted_header_parses_back_to_the_contracts_attributes() {
        let session_end = 1_800_000_000 + 7 * 24 * 3600;
        let end = OffsetDateTime::from_unix_timestamp(session_end).expect("valid time");
        let hosts = [
            None,
            Some("localhost:3000"),
            Some("127.0.0.1:3000"),
            Some("api.example.com"),
            Some("api.example.co.uk:8443"),
        ];
        for policy in policies() {
            for context in [USER, ADMIN] {
                for host in hosts {
                    let domain = match &policy.domain {
                        CookieDomain::Fixed(domain) => Some(domain.as_str()),
                        CookieDomain::FromHost => match host {
                            Some("api.example.com") => Some(".example.com"),
                            Some("api.example.co.uk:8443") => Some(".example.co.uk"),
                            _ => None,
                        },
                    };
                    let partitioned = policy.partitioned.iter().any(|c| c == context.name);
                    let set =
                        policy.issue(&context, host, "access.token-_x", "csrf-_x", session_end);
                    let deleted = policy.clear(&context, host);
                    let cases = [
                        (
                            &set[0],
                            context.access_cookie,
                            "access.token-_x",
                            true,
                            false,
                        ),
                        (&set[1], context.csrf_cookie, "csrf-_x", false, false),
                        (&deleted[0], context.access_cookie, "", true, true),
                        (&deleted[1], context.csrf_cookie, "", false, true),
                    ];
                    for (header, name, value, http_only, delete) in cases {
                        let text = header.to_str().expect("ASCII header");
                        let cookie = Cookie::parse(text).expect("the crate parses it");
                        let what = format!("{policy:?} {} {host:?}: {text}", context.name);
                        assert_eq!(cookie.name(), name, "{what}");
                        assert_eq!(cookie.value(), value, "{what}");
                        assert_eq!(cookie.path(), Some("/"), "{what}");
                        let expires = cookie.expires_datetime().expect("Expires");
                        if delete {
                            assert_eq!(expires, OffsetDateTime::UNIX_EPOCH, "{what}");
                            assert_eq!(cookie.max_age(), Some(Duration::ZERO), "{what}");
                        } else {
                            assert_eq!(expires, end, "{what}");
                            assert_eq!(cookie.max_age(), None, "{what}");
                        }
                        assert_eq!(cookie.http_only(), http_only.then_some(true), "{what}");
                        assert_eq!(cookie.secure(), policy.secure.then_some(true), "{what}");
                        let same_site = match policy.same_site {
                            SameSite::Lax => cookie::SameSite::Lax,
                            SameSite::None => cookie::SameSite::None,
                        };
                        assert_eq!(cookie.same_site(), Some(same_site), "{what}");
                        // Written with its leading dot; the crate reads it without, as user
                        // agents do.
                        assert_eq!(
                            cookie.domain(),
                            domain.map(|d| d.trim_start_matches('.')),
                            "{what}"
                        );
                        assert_eq!(cookie.partitioned(), partitioned.then_some(true), "{what}");
                        // Nothing but these attributes: the parse read back every one written.
                        let attributes = text.split(';').skip(1).count();
                        let expected = 2 // Path, Expires
                            + usize::from(delete)
                            + usize::from(domain.is_some())
                            + usize::from(http_only)
                            + usize::from(policy.secure)
                            + 1 // SameSite
                            + usize::from(partitioned);
                        assert_eq!(attributes, expected, "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn headers_are_written_in_the_crates_form() {
        let policy = &policies()[3];
        let [access, csrf] = policy.issue(&ADMIN, Some("api.example.com"), "t", "c", 86_400);
        assert_eq!(
            access,
            "team_jwt_access=t; HttpOnly; SameSite=None; Partitioned; Secure; Path=/; \
             Expires=Fri, 02 Jan 1970 00:00:00 GMT; Domain=.example.com"
        );
        assert_eq!(
            csrf,
            "TEAM_CSRF_TOKEN=c; SameSite=None; Partitioned; Secure; Path=/; \
             Expires=Fri, 02 Jan 1970 00:00:00 GMT; Domain=.example.com"
        );
        let [access, _] = policies()[0].clear(&USER, Some("localhost:3000"));
        assert_eq!(
            access,
            "jwt_access=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0; \
             Expires=Thu, 01 Jan 1970 00:00:00 GMT"
        );
    }

    #[test]
    fn reads_only_the_named_cookie() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("team_jwt_access=a; jwt_access=b; CSRF_TOKEN="),
        );
        assert_eq!(read_cookie(&headers, "jwt_access"), Some("b"));
        assert_eq!(read_cookie(&headers, "team_jwt_access"), Some("a"));
        assert_eq!(read_cookie(&headers, "CSRF_TOKEN"), None);
        assert_eq!(read_cookie(&headers, "missing"), None);
    }
}
