//! Which browser origins may send credentialed, state-changing requests. One policy serves the
//! CORS layer and the cross-site check of unsafe requests (defence in depth beside CSRF).

use http::{HeaderMap, header};

#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    /// Exact origins (`https://app.example.com`); `None` is development's rule: any
    /// `http://localhost:<port>` or `http://127.0.0.1:<port>`.
    allowed: Option<Vec<String>>,
}

impl OriginPolicy {
    pub fn new(allowed: Option<Vec<String>>) -> Self {
        Self { allowed }
    }

    /// Whether CORS may answer `origin` with credentials.
    pub fn allows(&self, origin: &str) -> bool {
        match &self.allowed {
            Some(list) => list.iter().any(|o| o == origin),
            None => ["http://localhost:", "http://127.0.0.1:"]
                .iter()
                .any(|prefix| {
                    origin.strip_prefix(prefix).is_some_and(|port| {
                        !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
                    })
                }),
        }
    }

    /// Whether an unsafe cookie-authenticated request may proceed: its `Origin`, when sent, is
    /// allowed or the API's own; without `Origin`, `Sec-Fetch-Site` must not say `cross-site`.
    /// Clients that send neither (curl, servers) are not browsers and pass.
    pub fn permits(&self, headers: &HeaderMap) -> bool {
        if let Some(origin) = headers.get(header::ORIGIN) {
            let Ok(origin) = origin.to_str() else {
                return false;
            };
            return self.allows(origin) || is_own_origin(origin, headers);
        }
        headers
            .get("sec-fetch-site")
            .is_none_or(|site| site.as_bytes() != b"cross-site")
    }
}

/// `origin` names the host the request was sent to (`http(s)://` + the Host header).
fn is_own_origin(origin: &str, headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn development_allows_local_origins_only() {
        let dev = OriginPolicy::new(None);
        assert!(dev.allows("http://localhost:5173"));
        assert!(dev.allows("http://127.0.0.1:3000"));
        assert!(!dev.allows("http://localhost"));
        assert!(!dev.allows("http://localhost:80.evil.com"));
        assert!(!dev.allows("https://evil.example"));
    }

    #[test]
    fn listed_origins_are_exact() {
        let policy = OriginPolicy::new(Some(vec!["https://app.example.com".into()]));
        assert!(policy.allows("https://app.example.com"));
        assert!(!policy.allows("https://app.example.com.evil.io"));
        assert!(!policy.allows("http://app.example.com"));
    }

    #[test]
    fn unsafe_requests_from_foreign_sites_are_refused() {
        let policy = OriginPolicy::new(Some(vec!["https://app.example.com".into()]));
        let host = ("host", "api.example.com");
        assert!(policy.permits(&headers(&[host, ("origin", "https://app.example.com")])));
        assert!(policy.permits(&headers(&[host, ("origin", "https://api.example.com")])));
        assert!(!policy.permits(&headers(&[host, ("origin", "https://evil.example")])));
        assert!(!policy.permits(&headers(&[host, ("origin", "null")])));
        assert!(!policy.permits(&headers(&[host, ("sec-fetch-site", "cross-site")])));
        assert!(policy.permits(&headers(&[host, ("sec-fetch-site", "same-origin")])));
        assert!(policy.permits(&headers(&[host])));
    }
}
