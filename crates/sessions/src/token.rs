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

    /// A 256-bit key for another purpose, derived from this secret under `label`: SHA-256 of
    /// the label, a zero byte and the secret. The secret itself never leaves this type.
    pub fn derive(&self, label: &str) -> [u8; 32] {
        Sha256::new()
            .chain_update(label.as_bytes())
            .chain_update([0u8])
            .chain_update(&self.0)
            .finalize()
            .into()
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

/// One signing key of `JWT_SIGNING_KEYS` (CONTRACT §12): its `kid`, or none for the one-key
/// form `JWT_SIGNING_SECRET`, whose tokens carry no `kid`.
#[derive(Debug, Clone)]
pub struct SigningKey {
    pub kid: Option<String>,
    pub secret: SigningSecret,
}

/// The claims of an access token. `subject` is written under the context's payload key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessClaims {
    pub subject: i64,
    pub uid: SessionId,
    pub ruid: SessionId,
    pub iat: i64,
    pub exp: i64,
    /// Whether the session presented a second factor (at login, or by confirming one at
    /// enrolment): RFC 8176's `"amr": ["pwd", "mfa"]` on the wire, absent otherwise. It is
    /// signed into every token of the session, so reading it costs no store round trip, and a
    /// refresh carries it over from the token it replaces (CONTRACT §11).
    pub second_factor: bool,
    /// Which of the service's keys signed the token ([`TokenKeys::SIGNING`] for the current
    /// one); its CSRF token is derived with the same key. Not a claim on the wire: the `kid`
    /// of the token's header names it.
    pub key: usize,
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

/// The authentication methods of a session that presented a second factor (RFC 8176).
const SECOND_FACTOR_AMR: [&str; 2] = ["pwd", "mfa"];

struct WireOut<'a> {
    payload_key: &'a str,
    claims: &'a AccessClaims,
}

impl Serialize for WireOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let second_factor = self.claims.second_factor;
        let mut map = serializer.serialize_map(Some(5 + usize::from(second_factor)))?;
        map.serialize_entry(self.payload_key, &self.claims.subject)?;
        map.serialize_entry("uid", &self.claims.uid.to_string())?;
        map.serialize_entry("ruid", &self.claims.ruid.to_string())?;
        map.serialize_entry("iat", &self.claims.iat)?;
        map.serialize_entry("exp", &self.claims.exp)?;
        if second_factor {
            map.serialize_entry("amr", &SECOND_FACTOR_AMR)?;
        }
        map.end()
    }
}

/// The claims as they arrive: the four known ones, `amr` when present, plus every other integer claim, one of
/// which must be the context's payload key. A visitor instead of `#[serde(flatten)]`, which
/// would buffer every field before decoding (this runs on every request).
struct WireIn {
    uid: String,
    ruid: String,
    iat: i64,
    exp: i64,
    second_factor: bool,
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
        let mut second_factor = false;
        let mut subjects = Vec::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "uid" => uid = Some(map.next_value()?),
                "ruid" => ruid = Some(map.next_value()?),
                "iat" => iat = Some(map.next_value()?),
                "exp" => exp = Some(map.next_value()?),
                "amr" => {
                    let methods: Vec<Cow<'de, str>> = map.next_value()?;
                    second_factor = methods.iter().any(|m| m == "mfa");
                }
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
            second_factor,
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

/// The keys of the service: the first signs, every one verifies (CONTRACT §12).
pub struct TokenKeys {
    keys: Vec<Key>,
}

/// One key: signing and verification with its secret, and the CSRF key derived from it.
struct Key {
    kid: Option<String>,
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

impl Key {
    fn new(kid: Option<String>, secret: &SigningSecret) -> Self {
        let csrf_key: [u8; 32] = Sha256::new()
            .chain_update(b"careers-api/csrf/v1\0")
            .chain_update(&secret.0)
            .finalize()
            .into();
        let mut header = Header::new(Algorithm::HS256);
        header.kid = kid.clone();
        let header_segment = URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&header).expect("a JWT header serialises to JSON"));
        Self {
            kid,
            encoding: EncodingKey::from_secret(&secret.0),
            mac: <Hmac<Sha256> as Mac>::new_from_slice(&secret.0)
                .expect("HMAC accepts keys of any length"),
            header,
            header_segment,
            csrf_key,
        }
    }
}

impl TokenKeys {
    /// The index of the key that signs.
    pub const SIGNING: usize = 0;

    /// One key without `kid` (`JWT_SIGNING_SECRET` alone).
    pub fn new(secret: &SigningSecret) -> Self {
        Self {
            keys: vec![Key::new(None, secret)],
        }
    }

    /// Several keys (`JWT_SIGNING_KEYS`, then `JWT_SIGNING_SECRET` if set beside it): the first
    /// signs; a token verifies with the key its header's `kid` names, a token without `kid`
    /// with the key that has none.
    ///
    /// # Panics
    /// With no key: configuration validates that there is one.
    pub fn with_keys(keys: &[SigningKey]) -> Self {
        assert!(!keys.is_empty(), "at least one signing key");
        Self {
            keys: keys
                .iter()
                .map(|k| Key::new(k.kid.clone(), &k.secret))
                .collect(),
        }
    }

    /// The `kid` of the signing key, if it has one.
    pub fn signing_kid(&self) -> Option<&str> {
        self.keys[Self::SIGNING].kid.as_deref()
    }

    /// Signs the claims with the signing key. The same claims always give the same bytes
    /// (HS256 is deterministic).
    pub fn sign(&self, context: &SessionContext, claims: &AccessClaims) -> String {
        let key = &self.keys[Self::SIGNING];
        let wire = WireOut {
            payload_key: context.payload_key,
            claims,
        };
        // Serialising integers and strings into JSON and HMAC-ing them cannot fail.
        jsonwebtoken::encode(&key.header, &wire, &key.encoding)
            .expect("HS256 signing of plain claims cannot fail")
    }

    /// Verifies signature and algorithm (HS256 only) with the key the header's `kid` names
    /// and reads the claims of `context`.
    ///
    /// What `jsonwebtoken::decode` with HS256 alone, no claim validation and the key chosen by
    /// `kid` accepts, tested equal to it (expiry is the engine's, against its clock), done
    /// without its per-call costs: the HMAC keys are set up once, the header is only parsed
    /// when it is not one that [`TokenKeys::sign`] writes, and the payload is decoded on the
    /// stack. This runs on every authenticated request (docs/PERFORMANCE.md, fast-path
    /// register).
    pub fn verify(
        &self,
        context: &SessionContext,
        token: &str,
    ) -> Result<AccessClaims, TokenRejection> {
        let (key, wire) = self.verified_claims(token).ok_or(TokenRejection::Invalid)?;
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
            second_factor: wire.second_factor,
            key,
        })
    }

    /// The key a header segment names: one the service writes itself, else by the parsed
    /// header's `kid` (none: the key without one); `None` for another algorithm or an unknown
    /// `kid`.
    fn key_of(&self, header: &str) -> Option<usize> {
        if let Some(index) = self.keys.iter().position(|k| k.header_segment == header) {
            return Some(index);
        }
        let header = hs256_header(header)?;
        self.keys.iter().position(|k| k.kid == header.kid)
    }

    /// The signing key's index and the claims of a well-formed HS256 token; `None` otherwise.
    fn verified_claims(&self, token: &str) -> Option<(usize, WireIn)> {
        let mut segments = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return None;
        };
        let index = self.key_of(header)?;
        // Room for a few bytes more than a SHA-256 tag, so that a longer signature is decoded
        // and then refused by its length rather than by the decoder's size estimate.
        let mut tag = [0u8; 36];
        let tag = match URL_SAFE_NO_PAD.decode_slice(signature, &mut tag) {
            Ok(32) => &tag[..32],
            _ => return None,
        };
        let mut mac = self.keys[index].mac.clone();
        mac.update(&token.as_bytes()[..header.len() + 1 + payload.len()]);
        mac.verify_slice(tag).ok()?;
        // Access tokens are about 200 bytes of JSON; a larger one is decoded on the heap.
        let mut buf = [0u8; 512];
        let claims = match URL_SAFE_NO_PAD.decode_slice(payload, &mut buf) {
            Ok(len) => serde_json::from_slice(&buf[..len]),
            Err(_) => serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?),
        };
        Some((index, claims.ok()?))
    }

    /// The CSRF token bound to an access token: HMAC-SHA256 of its UID, keyed from the secret
    /// of the key that signed the token (`key`, as in [`AccessClaims::key`]).
    pub fn csrf_for(&self, key: usize, uid: &SessionId) -> String {
        URL_SAFE_NO_PAD.encode(self.csrf_mac(key, uid))
    }

    /// Constant-time comparison of a presented CSRF token with the one bound to `uid`.
    pub fn csrf_matches(&self, key: usize, uid: &SessionId, presented: &[u8]) -> bool {
        let expected = self.csrf_for(key, uid);
        expected.as_bytes().ct_eq(presented).into()
    }

    fn csrf_mac(&self, key: usize, uid: &SessionId) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.keys[key].csrf_key)
            .expect("HMAC accepts keys of any length");
        mac.update(&uid.0);
        mac.finalize().into_bytes().into()
    }
}

/// A header segment other than the ones this service writes, parsed as `jsonwebtoken` parses
/// it (its `Header`), if it names HS256.
fn hs256_header(segment: &str) -> Option<Header> {
    URL_SAFE_NO_PAD
        .decode(segment)
        .ok()
        .and_then(|json| serde_json::from_slice::<Header>(&json).ok())
        .filter(|header| header.alg == Algorithm::HS256)
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
            second_factor: false,
            key: TokenKeys::SIGNING,
        }
    }

    fn secret(byte: u8) -> SigningSecret {
        SigningSecret::new(vec![byte; 32]).unwrap()
    }

    /// `k2` signs, `k1` is the previous key, and the one-key form's secret stays for tokens
    /// issued before the move to `kid`s.
    fn rotated() -> TokenKeys {
        TokenKeys::with_keys(&[
            SigningKey {
                kid: Some("k2".into()),
                secret: secret(9),
            },
            SigningKey {
                kid: Some("k1".into()),
                secret: secret(7),
            },
            SigningKey {
                kid: None,
                secret: secret(8),
            },
        ])
    }

    #[test]
    fn signing_is_deterministic_and_round_trips() {
        let keys = keys();
        let c = claims();
        let a = keys.sign(&USER, &c);
        assert_eq!(a, keys.sign(&USER, &c));
        assert_eq!(keys.verify(&USER, &a), Ok(c));
        // The tokens we sign take the verifier's fast path: no header parsing.
        assert_eq!(
            a.split('.').next(),
            Some(keys.keys[0].header_segment.as_str())
        );
    }

    #[test]
    fn the_second_factor_is_signed_in_as_rfc_8176_amr_and_read_back() {
        let keys = keys();
        let with = AccessClaims {
            second_factor: true,
            ..claims()
        };
        let token = keys.sign(&ADMIN, &with);
        assert_eq!(keys.verify(&ADMIN, &token), Ok(with));
        let payload = token.split('.').nth(1).unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert_eq!(json["amr"], serde_json::json!(["pwd", "mfa"]));
        // Without it the claim is absent, and an `amr` without "mfa" is no second factor.
        let without = keys.sign(&ADMIN, &claims());
        assert!(!without.contains(payload));
        let json: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(without.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert!(json.get("amr").is_none());
        assert!(!keys.verify(&ADMIN, &without).unwrap().second_factor);
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
        let csrf = keys.csrf_for(0, &a);
        assert!(keys.csrf_matches(0, &a, csrf.as_bytes()));
        assert!(!keys.csrf_matches(0, &b, csrf.as_bytes()));
        assert!(!keys.csrf_matches(0, &a, b""));
    }

    #[test]
    fn the_first_key_signs_with_its_kid_and_every_listed_key_verifies() {
        let keys = rotated();
        let c = claims();
        let token = keys.sign(&USER, &c);
        let header = jsonwebtoken::decode_header(&token).unwrap();
        assert_eq!(header.kid.as_deref(), Some("k2"));
        assert_eq!(keys.signing_kid(), Some("k2"));
        assert_eq!(keys.verify(&USER, &token), Ok(c));
        // A token of the previous key (signed before the rotation) verifies, and says so.
        let previous = TokenKeys::with_keys(&[SigningKey {
            kid: Some("k1".into()),
            secret: secret(7),
        }]);
        let old = previous.sign(&USER, &c);
        assert_eq!(keys.verify(&USER, &old), Ok(AccessClaims { key: 1, ..c }));
        // So does a token without `kid` of the one-key form kept beside the list.
        let legacy = TokenKeys::new(&secret(8)).sign(&USER, &c);
        assert_eq!(
            keys.verify(&USER, &legacy),
            Ok(AccessClaims { key: 2, ..c })
        );
        // An unlisted `kid`, a listed `kid` over another key's signature, and a token without
        // `kid` when no key lacks one are all invalid.
        let unlisted = TokenKeys::with_keys(&[SigningKey {
            kid: Some("k0".into()),
            secret: secret(7),
        }]);
        assert_eq!(
            keys.verify(&USER, &unlisted.sign(&USER, &c)),
            Err(TokenRejection::Invalid)
        );
        let forged = TokenKeys::with_keys(&[SigningKey {
            kid: Some("k2".into()),
            secret: secret(7),
        }]);
        assert_eq!(
            keys.verify(&USER, &forged.sign(&USER, &c)),
            Err(TokenRejection::Invalid)
        );
        let only_kids = TokenKeys::with_keys(&[SigningKey {
            kid: Some("k1".into()),
            secret: secret(7),
        }]);
        assert_eq!(
            only_kids.verify(&USER, &TokenKeys::new(&secret(7)).sign(&USER, &c)),
            Err(TokenRejection::Invalid)
        );
        // And the one-key form refuses any `kid`.
        assert_eq!(
            TokenKeys::new(&secret(7)).verify(&USER, &old),
            Err(TokenRejection::Invalid)
        );
    }

    #[test]
    fn csrf_is_derived_with_the_key_that_signed_the_token() {
        let keys = rotated();
        let uid = SessionId::random();
        // The one-key form's CSRF is the same as before keys had ids: live sessions keep theirs.
        assert_eq!(
            keys.csrf_for(2, &uid),
            TokenKeys::new(&secret(8)).csrf_for(0, &uid)
        );
        assert_ne!(keys.csrf_for(0, &uid), keys.csrf_for(1, &uid));
        assert!(keys.csrf_matches(1, &uid, keys.csrf_for(1, &uid).as_bytes()));
        assert!(!keys.csrf_matches(0, &uid, keys.csrf_for(1, &uid).as_bytes()));
    }

    /// What `jsonwebtoken` accepts with the key chosen by the header's `kid` as its
    /// documentation shows (`decode_header`, then `decode` with that key): the oracle of
    /// [`TokenKeys::verify`]. `keys` are (kid, secret) pairs.
    fn library_accepts(keys: &[(Option<&str>, &[u8])], token: &str) -> bool {
        let mut validation = jsonwebtoken::Validation::new(Algorithm::HS256);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return false;
        };
        let Some((_, secret)) = keys.iter().find(|(kid, _)| *kid == header.kid.as_deref()) else {
            return false;
        };
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
            // The one-key form knows no `kid`; the rotated set below knows k1 (this secret), k2
            // (another) and the kid-less key (a third).
            (
                "a kid",
                encode(Algorithm::HS256, Some("JWT"), Some("k1"), &secret, &body),
                false,
            ),
            (
                "kid k2, its secret",
                encode(Algorithm::HS256, Some("JWT"), Some("k2"), &[9u8; 32], &body),
                false,
            ),
            (
                "kid k2, k1's secret",
                encode(Algorithm::HS256, Some("JWT"), Some("k2"), &secret, &body),
                false,
            ),
            (
                "no kid, the third secret",
                encode(Algorithm::HS256, Some("JWT"), None, &[8u8; 32], &body),
                false,
            ),
            (
                "an unlisted kid",
                encode(Algorithm::HS256, Some("JWT"), Some("k0"), &secret, &body),
                false,
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
        let one_key: [(Option<&str>, &[u8]); 1] = [(None, &secret)];
        for (what, token, accepted) in &cases {
            let library = library_accepts(&one_key, token);
            assert_eq!(
                keys.verified_claims(token).is_some(),
                library,
                "{what}: {token}"
            );
            if *what != "mutation" {
                assert_eq!(library, *accepted, "{what}");
            }
        }
        // The same cases against three keys chosen by `kid`.
        let rotated_keys = rotated();
        let three: [(Option<&str>, &[u8]); 3] = [
            (Some("k2"), &[9u8; 32]),
            (Some("k1"), &secret),
            (None, &[8u8; 32]),
        ];
        let mut accepted_by_three = Vec::new();
        for (what, token, _) in &cases {
            let library = library_accepts(&three, token);
            assert_eq!(
                rotated_keys.verified_claims(token).is_some(),
                library,
                "three keys, {what}: {token}"
            );
            if library {
                accepted_by_three.push(*what);
            }
        }
        // k1's, k2's, and the third secret's kid-less tokens ("another secret" is that one).
        assert_eq!(
            accepted_by_three,
            [
                "a kid",
                "kid k2, its secret",
                "no kid, the third secret",
                "another secret"
            ]
        );
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
