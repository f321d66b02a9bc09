use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use std::fmt;

/// A 128-bit random identifier (refresh UID or access UID), written as 22 base64url characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionId(pub [u8; 16]);

impl SessionId {
    pub fn random() -> Self {
        let mut bytes = [0u8; 16];
        // The OS RNG failing is unrecoverable: no session may be issued with a guessable id.
        getrandom::fill(&mut bytes).expect("operating system random number generator failed");
        Self(bytes)
    }

    pub fn parse(text: &str) -> Option<Self> {
        if text.len() != 22 {
            return None;
        }
        let mut bytes = [0u8; 16];
        match URL_SAFE_NO_PAD.decode_slice(text, &mut bytes) {
            Ok(16) => Some(Self(bytes)),
            _ => None,
        }
    }

    pub fn as_u128(&self) -> u128 {
        u128::from_le_bytes(self.0)
    }

    /// The public handle of the session whose refresh UID this is: the first 128 bits of
    /// SHA-256 over a label and the UID. It names the session in listings (CONTRACT §9)
    /// without giving away the refresh UID, a credential's half that another session of the
    /// same identity, or an admin, must never see; a random UID in, a random-looking handle
    /// out, and nothing to store.
    pub fn public_handle(&self) -> Self {
        let digest = Sha256::new()
            .chain_update(b"careers-api session handle\0")
            .chain_update(self.0)
            .finalize();
        let mut handle = [0u8; 16];
        handle.copy_from_slice(&digest[..16]);
        Self(handle)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

/// Ids are credentials' halves: never print them whole in logs.
impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({:02x}{:02x}…)", self.0[0], self.0[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text() {
        let id = SessionId::random();
        let text = id.to_string();
        assert_eq!(text.len(), 22);
        assert_eq!(SessionId::parse(&text), Some(id));
    }

    #[test]
    fn the_public_handle_is_stable_and_not_the_uid() {
        let id = SessionId::random();
        assert_eq!(id.public_handle(), id.public_handle());
        assert_ne!(id.public_handle(), id);
        assert_ne!(id.public_handle(), SessionId::random().public_handle());
    }

    #[test]
    fn rejects_wrong_length_and_alphabet() {
        assert_eq!(SessionId::parse(""), None);
        assert_eq!(SessionId::parse("AAAAAAAAAAAAAAAAAAAAA"), None);
        assert_eq!(SessionId::parse("AAAAAAAAAAAAAAAAAAAAA+"), None);
        assert_eq!(SessionId::parse("AAAAAAAAAAAAAAAAAAAAAAA"), None);
    }
}
