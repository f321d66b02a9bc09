//! The one place that knows each environment's cookie policy and writes `Set-Cookie` values.

use chrono::DateTime;
use http::{HeaderMap, HeaderValue, header};
use std::fmt::Write as _;
use std::net::IpAddr;

use crate::SessionContext;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SameSite {
    Lax,
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CookieDomain {
    /// A configured parent domain (production, qa), written as given (`.example.com`).
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
        let expires = http_date(session_expires_at);
        [
            self.build(
                context,
                host,
                context.access_cookie,
                access_token,
                &expires,
                true,
                false,
            ),
            self.build(
                context,
                host,
                context.csrf_cookie,
                csrf,
                &expires,
                false,
                false,
            ),
        ]
    }

    /// Deletes both cookies of a context: same name, Path and Domain, empty value, `Max-Age=0`.
    pub fn clear(&self, context: &SessionContext, host: Option<&str>) -> [HeaderValue; 2] {
        let expires = http_date(0);
        [
            self.build(
                context,
                host,
                context.access_cookie,
                "",
                &expires,
                true,
                true,
            ),
            self.build(
                context,
                host,
                context.csrf_cookie,
                "",
                &expires,
                false,
                true,
            ),
        ]
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        &self,
        context: &SessionContext,
        host: Option<&str>,
        name: &str,
        value: &str,
        expires: &str,
        http_only: bool,
        delete: bool,
    ) -> HeaderValue {
        let mut out = String::with_capacity(96 + value.len());
        let _ = write!(out, "{name}={value}; Path=/; Expires={expires}");
        if delete {
            out.push_str("; Max-Age=0");
        }
        if let Some(domain) = self.domain_for(host) {
            let _ = write!(out, "; Domain={domain}");
        }
        if http_only {
            out.push_str("; HttpOnly");
        }
        if self.secure {
            out.push_str("; Secure");
        }
        out.push_str(match self.same_site {
            SameSite::Lax => "; SameSite=Lax",
            SameSite::None => "; SameSite=None",
        });
        if self.partitioned.iter().any(|c| c == context.name) {
            out.push_str("; Partitioned");
        }
        // Names are static, values are base64url tokens and dates: always a valid header value.
        HeaderValue::try_from(out).expect("cookie built from token characters only")
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

fn http_date(unix_seconds: i64) -> String {
    DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

/// The value of cookie `name` from the request's `Cookie` headers, if present and non-empty.
pub fn read_cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim_matches('"'))
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
