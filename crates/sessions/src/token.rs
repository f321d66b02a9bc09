//! HS256 access tokens and the CSRF tokens bound to them.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::fmt;
use subtle::ConstantTimeEq;

use crate::{SessionContext, SessionId};

/// The HS256 signing key. Its `Debug` never shows the bytes.
#[derive(Clone)]
pub struct SigningSecret(Vec<u8>);

impl SigningSecret {
    pub const MIN_LEN: usize = 32;

    pub fn new(bytes: Vec<u8>) -> Result<Self, &'static str> {
        if bytes.len() < Self::MIN_LEN {
            return Err("JWT_SIGNING_SECRET must be at least 32 bytes");
        }
        Ok(Self(bytes))
    }

    pub fn random() -> Self {
        let mut bytes = vec![0u8; 64];
        getrandom::fill(&mut bytes).expect("operating system random number generator failed");
        Self(bytes)
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(<redacted>)")
    }
}

/// The claims of an access token. `subject` is written under the context's payload key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessClaims {
    pub subject: i64,
    pub uid: SessionId,
    pub ruid: SessionId,
    pub iat: i64,
    pub exp: i64,
}

impl AccessClaims {
    /// Where the token's session lives in the store.
    pub fn session_key(&self) -> crate::SessionKey {
        crate::SessionKey {
            subject: self.subject,
            ruid: self.ruid,
        }
    }
}

struct WireOut<'a> {
    payload_key: &'a str,
    claims: &'a AccessClaims,
}

impl Serialize for WireOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry(self.payload_key, &self.claims.subject)?;
        map.serialize_entry("uid", &self.claims.uid.to_string())?;
        map.serialize_entry("ruid", &self.claims.ruid.to_string())?;
        map.serialize_entry("iat", &self.claims.iat)?;
        map.serialize_entry("exp", &self.claims.exp)?;
        map.end()
    }
}

/// The claims as they arrive: the four known ones, plus every other integer claim, one of
/// which must be the context's payload key. A visitor instead of `#[serde(flatten)]`, which
/// would buffer every field before decoding (this runs on every request).
struct WireIn {
    uid: String,
    ruid: String,
    iat: i64,
    exp: i64,
    subjects: Vec<(String, i64)>,
}

impl<'de> Deserialize<'de> for WireIn {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(WireVisitor)
    }
}

struct WireVisitor;

impl<'de> serde::de::Visitor<'de> for WireVisitor {
    type Value = WireIn;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JWT claims object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<WireIn, A::Error> {
        use serde::de::Error;
        let (mut uid, mut ruid, mut iat, mut exp) = (None, None, None, None);
        let mut subjects = Vec::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "uid" => uid = Some(map.next_value()?),
                "ruid" => ruid = Some(map.next_value()?),
                "iat" => iat = Some(map.next_value()?),
                "exp" => exp = Some(map.next_value()?),
                _ => {
                    if let serde_json::Value::Number(n) = map.next_value::<serde_json::Value>()?
                        && let Some(value) = n.as_i64()
                    {
                        subjects.push((key.into_owned(), value));
                    }
                }
            }
        }
        Ok(WireIn {
            uid: uid.ok_or_else(|| A::Error::missing_field("uid"))?,
            ruid: ruid.ok_or_else(|| A::Error::missing_field("ruid"))?,
            iat: iat.ok_or_else(|| A::Error::missing_field("iat"))?,
            exp: exp.ok_or_else(|| A::Error::missing_field("exp"))?,
            subjects,
        })
    }
}

/// Why a token was not accepted. Expiry is not one of them: the engine decides what an expired
/// token may still do (refresh, logout) against its own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRejection {
    /// Bad signature, malformed, wrong algorithm, or the payload key of another context.
    Invalid,
}

/// Signing and verification keys plus the CSRF key derived from the same secret.
pub struct TokenKeys {
    encoding: EncodingKey,
    /// HMAC-SHA256 keyed with the secret once; each verification clones this state instead of
    /// deriving the key's inner and outer blocks again.
    mac: Hmac<Sha256>,
    header: Header,
    /// The header segment [`TokenKeys::sign`] writes: a token that carries it needs no header
    /// parsing.
    header_segment: String,
    csrf_key: [u8; 32],
}

impl TokenKeys {
    pub fn new(secret: &SigningSecret) -> Self {
        let csrf_key: [u8; 32] = Sha256::new()
            .chain_update(b"careers-api/csrf/v1\0")
            .chain_update(&secret.0)
            .finalize()
            .into();
        let header = Header::new(Algorithm::HS256);
        let header_segment = URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&header).expect("a JWT header serialises to JSON"));
        Self {
            encoding: EncodingKey::from_secret(&secret.0),
            mac: <Hmac<Sha256> as Mac>::new_from_slice(&secret.0)
                .expect("HMAC accepts keys of any length"),
            header,
            header_segment,
            csrf_key,
        }
    }

    /// Signs the claims. The same claims always give the same bytes (HS256 is deterministic).
    pub fn sign(&self, context: &SessionContext, claims: &AccessClaims) -> String {
        let wire = WireOut {
            payload_key: context.payload_key,
            claims,
        };
        // Serialising integers and strings into JSON and HMAC-ing them cannot fail.
        jsonwebtoken::encode(&self.header, &wire, &self.encoding)
            .expect("HS256 signing of plain claims cannot fail")
    }

    /// Verifies signature and algorithm (HS256 only) and reads the claims of `context`.
    ///
    /// What `jsonwebtoken::decode` with HS256 alone and no claim validation accepts, tested
    /// equal to it (expiry is the engine's, against its clock), done without its per-call
    /// costs: the HMAC key is set up once, the header is only parsed when it is not the one
    /// [`TokenKeys::sign`] writes, and the payload is decoded on the stack. This runs on every
    /// authenticated request (docs/PERFORMANCE.md, session 4).
    pub fn verify(
        &self,
        context: &SessionContext,
        token: &str,
    ) -> Result<AccessClaims, TokenRejection> {
        let wire = self.verified_claims(token).ok_or(TokenRejection::Invalid)?;
        let subject = wire
            .subjects
            .iter()
            .find(|(key, _)| key == context.payload_key)
            .map(|(_, value)| *value)
            .ok_or(TokenRejection::Invalid)?;
        Ok(AccessClaims {
            subject,
            uid: SessionId::parse(&wire.uid).ok_or(TokenRejection::Invalid)?,
            ruid: SessionId::parse(&wire.ruid).ok_or(TokenRejection::Invalid)?,
            iat: wire.iat,
            exp: wire.exp,
        })
    }

    /// The claims of a well-formed HS256 token signed with this key; `None` otherwise.
    fn verified_claims(&self, token: &str) -> Option<WireIn> {
        let mut segments = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return None;
        };
        if header != self.header_segment && !header_is_hs256(header) {
            return None;
        }
        // Room for a few bytes more than a SHA-256 tag, so that a longer signature is decoded
        // and then refused by its length rather than by the decoder's size estimate.
        let mut tag = [0u8; 36];
        let tag = match URL_SAFE_NO_PAD.decode_slice(signature, &mut tag) {
            Ok(32) => &tag[..32],
            _ => return None,
        };
        let mut mac = self.mac.clone();
        mac.update(&token.as_bytes()[..header.len() + 1 + payload.len()]);
        mac.verify_slice(tag).ok()?;
        // Access tokens are about 200 bytes of JSON; a larger one is decoded on the heap.
        let mut buf = [0u8; 512];
        let claims = match URL_SAFE_NO_PAD.decode_slice(payload, &mut buf) {
            Ok(len) => serde_json::from_slice(&buf[..len]),
            Err(_) => serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?),
        };
        claims.ok()
    }

    /// The CSRF token bound to an access token: HMAC-SHA256 of its UID.
    pub fn csrf_for(&self, uid: &SessionId) -> String {
        URL_SAFE_NO_PAD.encode(self.csrf_mac(uid))
    }

    /// Constant-time comparison of a presented CSRF token with the one bound to `uid`.
    pub fn csrf_matches(&self, uid: &SessionId, presented: &[u8]) -> bool {
        let expected = self.csrf_for(uid);
        expected.as_bytes().ct_eq(presented).into()
    }

    fn csrf_mac(&self, uid: &SessionId) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.csrf_key)
            .expect("HMAC accepts keys of any length");
        mac.update(&uid.0);
        mac.finalize().into_bytes().into()
    }
}

/// Whether a header segment other than the one this service writes still names HS256, as
/// `jsonwebtoken` judges it (its `Header`, whose `alg` must be HS256).
fn header_is_hs256(segment: &str) -> bool {
    URL_SAFE_NO_PAD
        .decode(segment)
        .ok()
        .and_then(|json| serde_json::from_slice::<Header>(&json).ok())
        .is_some_and(|header| header.alg == Algorithm::HS256)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::context::examples::{ADMIN, USER};

    fn keys() -> TokenKeys {
        TokenKeys::new(&SigningSecret::new(vec![7u8; 32]).unwrap())
    }

    fn claims() -> AccessClaims {
        AccessClaims {
            subject: 42,
            uid: SessionId::random(),
            ruid: SessionId::random(),
            iat: 1_700_000_000,
            exp: 1_700_003_600,
        }
    }

    #[test]
    fn signing_is_deterministic_and_round_trips() {
        let keys = keys();
        let c = claims();
        let a = keys.sign(&USER, &c);
        assert_eq!(a, keys.sign(&USER, &c));
        assert_eq!(keys.verify(&USER, &a), Ok(c));
        // The tokens we sign take the verifier's fast path: no header parsing.
        assert_eq!(a.split('.').next(), Some(keys.header_segment.as_str()));
    }

    #[test]
    fn other_contexts_payload_key_is_rejected() {
        let keys = keys();
        let token = keys.sign(&ADMIN, &claims());
        assert_eq!(keys.verify(&USER, &token), Err(TokenRejection::Invalid));
    }

    #[test]
    fn short_secret_is_refused() {
        assert!(SigningSecret::new(vec![1u8; 31]).is_err());
    }

    #[test]
    fn csrf_is_bound_to_the_access_uid() {
        let keys = keys();
        let (a, b) = (SessionId::random(), SessionId::random());
        let csrf = keys.csrf_for(&a);
        assert!(keys.csrf_matches(&a, csrf.as_bytes()));
        assert!(!keys.csrf_matches(&b, csrf.as_bytes()));
        assert!(!keys.csrf_matches(&a, b""));
    }

    /// What `jsonwebtoken::decode` accepted before [`TokenKeys::verify`] did the work itself.
    fn library_accepts(secret: &[u8], token: &str) -> bool {
        let mut validation = jsonwebtoken::Validation::new(Algorithm::HS256);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        let key = jsonwebtoken::DecodingKey::from_secret(secret);
        jsonwebtoken::decode::<WireIn>(token, &key, &validation).is_ok()
    }

    fn encode(
        alg: Algorithm,
        typ: Option<&str>,
        kid: Option<&str>,
        secret: &[u8],
        claims: &str,
    ) -> String {
        let mut header = Header::new(alg);
        header.typ = typ.map(str::to_owned);
        header.kid = kid.map(str::to_owned);
        let claims: serde_json::Value = serde_json::from_str(claims).unwrap();
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(secret)).unwrap()
    }

    #[test]
    fn verification_accepts_exactly_what_jsonwebtoken_accepts() {
        let secret = [7u8; 32];
        let keys = keys();
        let valid = keys.sign(&USER, &claims());
        let (header, rest) = valid.split_once('.').unwrap();
        let (payload, signature) = rest.split_once('.').unwrap();
        let body = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let mut cases: Vec<(&str, String, bool)> = vec![
            ("ours", valid.clone(), true),
            (
                "no typ",
                encode(Algorithm::HS256, None, None, &secret, &body),
                true,
            ),
            (
                "a kid",
                encode(Algorithm::HS256, Some("JWT"), Some("k1"), &secret, &body),
                true,
            ),
            (
                "HS384",
                encode(Algorithm::HS384, Some("JWT"), None, &secret, &body),
                false,
            ),
            (
                "HS512",
                encode(Algorithm::HS512, Some("JWT"), None, &secret, &body),
                false,
            ),
            (
                "another secret",
                encode(Algorithm::HS256, Some("JWT"), None, &[8u8; 32], &body),
                false,
            ),
            ("alg none", format!("{none_header}.{payload}."), false),
            (
                "alg none, our tag",
                format!("{none_header}.{payload}.{signature}"),
                false,
            ),
            ("padded tag", format!("{valid}="), false),
            ("four segments", format!("{valid}.{signature}"), false),
            ("two segments", format!("{header}.{payload}"), false),
            ("empty", String::new(), false),
            (
                "long tag",
                format!("{header}.{payload}.{signature}AAAA"),
                false,
            ),
            (
                "short tag",
                format!("{header}.{payload}.{}", &signature[..40]),
                false,
            ),
            ("not JSON", encode_raw(&secret, header, b"not json"), false),
            // A header naming another algorithm, with a valid HS256 tag: only the header
            // check refuses it.
            (
                "alg none, signed",
                encode_raw(&secret, &none_header, body.as_bytes()),
                false,
            ),
            (
                "no uid",
                encode(
                    Algorithm::HS256,
                    Some("JWT"),
                    None,
                    &secret,
                    r#"{"user_id":1,"ruid":"x","iat":1,"exp":2}"#,
                ),
                false,
            ),
            (
                "a large payload",
                encode(
                    Algorithm::HS256,
                    Some("JWT"),
                    None,
                    &secret,
                    &body.replacen('{', &format!(r#"{{"pad":"{}","#, "x".repeat(600)), 1),
                ),
                true,
            ),
        ];
        // Every single-character change of our token, to each of a few characters.
        for i in 0..valid.len() {
            for c in ['A', 'x', '-', '_', '.', '='] {
                let mut bytes = valid.clone().into_bytes();
                if bytes[i] != c as u8 {
                    bytes[i] = c as u8;
                    let token = String::from_utf8(bytes).unwrap();
                    cases.push(("mutation", token, false));
                }
            }
        }
        for (what, token, accepted) in &cases {
            let library = library_accepts(&secret, token);
            assert_eq!(
                keys.verified_claims(token).is_some(),
                library,
                "{what}: {token}"
            );
            if *what != "mutation" {
                assert_eq!(library, *accepted, "{what}");
            }
        }
    }

    /// `header.payload.signature` with a raw payload, signed with HS256.
    fn encode_raw(secret: &[u8], header: &str, payload: &[u8]) -> String {
        let message = format!("{header}.{}", URL_SAFE_NO_PAD.encode(payload));
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap();
        mac.update(message.as_bytes());
        format!(
            "{message}.{}",
            URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
        )
    }
}
