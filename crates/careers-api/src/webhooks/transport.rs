//! How a webhook reaches its receiver (CONTRACT §17): one `POST` by `reqwest` over rustls,
//! signed by `standardwebhooks`, within 15 s, never following a redirect, never through a
//! proxy from the environment.
//!
//! **Server-side request forgery.** Unless private addresses are allowed (`WEBHOOK_ALLOW_PRIVATE`,
//! development and test), only `https://` URLs whose host is globally reachable are taken.
//! The check runs at an endpoint's creation and again at every try, inside the client's DNS
//! resolver: the client connects only to the addresses that resolver returned, and it returns
//! only the globally reachable ones, so a DNS answer that changed after creation (a rebinding)
//! cannot reach an internal service, and a refused address fails the try without a request. A
//! host written as an address is judged as written. "Globally reachable" follows the IANA
//! special-purpose registries; an IPv4 address inside an IPv6 one (mapped, NAT64, 6to4) is
//! judged as the IPv4 address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use ipnet::{Ipv4Net, Ipv6Net};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Client, Url};

/// How long one try may take, answer included.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// The longest URL an endpoint may have.
pub const MAX_URL_LENGTH: usize = 2048;

/// IPv4 blocks that are not globally reachable (IANA IPv4 Special-Purpose Address Registry,
/// plus multicast and the limited broadcast).
static V4_BLOCKED: LazyLock<Vec<Ipv4Net>> = LazyLock::new(|| {
    [
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.31.196.0/24",
        "192.52.193.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "192.175.48.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    ]
    .iter()
    .map(|net| net.parse().expect("a valid block"))
    .collect()
});

/// IPv6 blocks that are not globally reachable (IANA IPv6 Special-Purpose Address Registry,
/// plus multicast); the blocks that embed an IPv4 address are judged by it instead.
static V6_BLOCKED: LazyLock<Vec<Ipv6Net>> = LazyLock::new(|| {
    [
        "::/96",
        "::1/128",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    ]
    .iter()
    .map(|net| net.parse().expect("a valid block"))
    .collect()
});

/// The IPv4 address inside `ip`, if it is of a block that embeds one: IPv4-mapped
/// (`::ffff:0:0/96`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::from(((hi as u32) << 16) | lo as u32);
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(low(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(low(hi, lo)),
        [0x2002, hi, lo, ..] => Some(low(hi, lo)),
        _ => None,
    }
}

/// Whether `ip` is globally reachable (the IANA special-purpose registries' "Globally
/// Reachable": an address of none of their other blocks).
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !V4_BLOCKED.iter().any(|net| net.contains(&v4)),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_global(IpAddr::V4(v4)),
            None => !V6_BLOCKED.iter().any(|net| net.contains(&v6)),
        },
    }
}

/// Why a URL is not an endpoint's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// The DNS resolver of the delivering client: the system's answer, kept to the globally
/// reachable addresses (all of them when private addresses are allowed).
struct GlobalOnly {
    allow_private: bool,
}

impl Resolve for GlobalOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let kept: Vec<SocketAddr> = found
                .filter(|addr| allow_private || is_global(addr.ip()))
                .collect();
            if kept.is_empty() {
                return Err("the host resolves to no globally reachable address".into());
            }
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

/// What a try came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx answer.
    Delivered(u16),
    /// Another answer (a 3xx included: redirects are not followed).
    Answered(u16),
    /// No answer: refused address, connection error, timeout.
    NoAnswer(String),
}

/// Makes ring (the provider lettre's rustls already uses) the process's rustls provider, which
/// every `reqwest` client needs (its `rustls-no-provider` feature); a second call does nothing.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The webhooks' HTTP client and its address policy.
pub struct Transport {
    client: Client,
    allow_private: bool,
}

impl Transport {
    /// A transport with the given timeout (CONTRACT §17: [`TIMEOUT`]).
    pub fn new(allow_private: bool, timeout: Duration) -> Self {
        install_crypto_provider();
        let roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let client = Client::builder()
            .tls_backend_preconfigured(tls)
            .dns_resolver(Arc::new(GlobalOnly { allow_private }))
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .https_only(!allow_private)
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("careers-api-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the webhook client's settings are valid");
        Self {
            client,
            allow_private,
        }
    }

    /// Whether `url` may be an endpoint's, without a lookup: its scheme, host and length, and
    /// a host written as an address. The lookup is [`Transport::check`]'s.
    pub fn parse(&self, url: &str) -> Result<Url, Refused> {
        if url.len() > MAX_URL_LENGTH {
            return Err(Refused(format!(
                "is longer than {MAX_URL_LENGTH} characters"
            )));
        }
        let parsed = Url::parse(url).map_err(|_| Refused("is not a URL".into()))?;
        match parsed.scheme() {
            "https" => {}
            "http" if self.allow_private => {}
            _ => return Err(Refused("must start with https://".into())),
        }
        let Some(host) = parsed.host() else {
            return Err(Refused("has no host".into()));
        };
        let literal = match host {
            url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
            url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
            url::Host::Domain(_) => None,
        };
        if let Some(ip) = literal
            && !self.allow_private
            && !is_global(ip)
        {
            return Err(Refused("is not a globally reachable address".into()));
        }
        Ok(parsed)
    }

    /// [`Transport::parse`], then the host's addresses: every one must be globally reachable
    /// (unless private addresses are allowed), at an endpoint's creation or change.
    pub async fn check(&self, url: &str) -> Result<(), Refused> {
        let parsed = self.parse(url)?;
        if self.allow_private {
            return Ok(());
        }
        let Some(url::Host::Domain(domain)) = parsed.host() else {
            return Ok(());
        };
        let port = parsed.port_or_known_default().unwrap_or(443);
        let found: Vec<SocketAddr> = tokio::net::lookup_host((domain, port))
            .await
            .map_err(|_| Refused("does not resolve".into()))?
            .collect();
        if found.is_empty() || found.iter().any(|addr| !is_global(addr.ip())) {
            return Err(Refused(
                "resolves to an address that is not globally reachable".into(),
            ));
        }
        Ok(())
    }

    /// One try: `body` to `url`, signed with every secret in `secrets` (the current one first).
    pub async fn send(
        &self,
        url: &str,
        message_id: &str,
        timestamp: i64,
        body: &str,
        secrets: &[&str],
    ) -> Outcome {
        let parsed = match self.parse(url) {
            Ok(parsed) => parsed,
            Err(Refused(why)) => return Outcome::NoAnswer(format!("the URL {why}")),
        };
        let mut signatures = Vec::with_capacity(secrets.len());
        for secret in secrets {
            let signed = standardwebhooks::Webhook::new(secret)
                .and_then(|hook| hook.sign(message_id, timestamp, body.as_bytes()));
            match signed {
                Ok(signature) => signatures.push(signature),
                Err(_) => return Outcome::NoAnswer("the secret is not valid".into()),
            }
        }
        let request = self
            .client
            .post(parsed)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(standardwebhooks::HEADER_WEBHOOK_ID, message_id)
            .header(
                standardwebhooks::HEADER_WEBHOOK_TIMESTAMP,
                timestamp.to_string(),
            )
            .header(
                standardwebhooks::HEADER_WEBHOOK_SIGNATURE,
                signatures.join(" "),
            )
            .body(body.to_owned());
        match request.send().await {
            // The answer's body is never read: a receiver's 10 MB costs nothing but the
            // connection, which dropping the answer closes.
            Ok(answer) if answer.status().is_success() => {
                Outcome::Delivered(answer.status().as_u16())
            }
            Ok(answer) => Outcome::Answered(answer.status().as_u16()),
            Err(error) if error.is_timeout() => Outcome::NoAnswer("timed out".into()),
            Err(error) if error.is_connect() => Outcome::NoAnswer("could not connect".into()),
            Err(_) => Outcome::NoAnswer("the request failed".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_purpose_addresses_are_not_global() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "::127.0.0.1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
        ] {
            assert!(!is_global(ip.parse().unwrap()), "{ip} is not global");
        }
    }

    #[test]
    fn public_addresses_are_global() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "::ffff:1.1.1.1",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
        ] {
            assert!(is_global(ip.parse().unwrap()), "{ip} is global");
        }
    }

    #[test]
    fn urls_are_judged_by_scheme_and_written_address() {
        let strict = Transport::new(false, TIMEOUT);
        assert!(strict.parse("https://hooks.example.com/in").is_ok());
        for url in [
            "http://hooks.example.com/in",
            "ftp://hooks.example.com/in",
            "https://127.0.0.1/in",
            "https://[::1]/in",
            "https://[::ffff:127.0.0.1]/in",
            "https://[::ffff:7f00:1]/in",
            "https://169.254.169.254/latest",
            "https://0x7f.1/in",
            "https://2130706433/in",
            "not a url",
        ] {
            assert!(strict.parse(url).is_err(), "{url} is refused");
        }
        let open = Transport::new(true, TIMEOUT);
        assert!(open.parse("http://127.0.0.1:9000/in").is_ok());
        assert!(open.parse("ftp://127.0.0.1/in").is_err());
    }
}
