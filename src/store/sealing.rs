//! Sealing the App's credentials before they leave the process for a shared database:
//! XChaCha20-Poly1305 (RustCrypto's `chacha20poly1305`) under a 256-bit key the operator gives
//! (`CREDENTIALS_KEY`, or a file named by `CREDENTIALS_KEY_FILE`), a fresh random 192-bit nonce
//! per seal, and the field's name as associated data so one sealed value cannot be passed off
//! as another.
//!
//! A sealed value is `"cmk1" ‖ key id (8 bytes) ‖ nonce (24) ‖ ciphertext and tag`. The key
//! id is a hash of the key, never the key: it tells "sealed under another key" (a wrong
//! `CREDENTIALS_KEY`, a clear error at start) from "altered or truncated" (corrupt), and lets a
//! rotation know which of the current and the previous key (`CREDENTIALS_KEY_PREVIOUS`)
//! opens a value.
//!
//! It must never log, print or format a key or an opened value; [`CredentialsKey`]'s `Debug`
//! shows only the key id.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use secrecy::zeroize::Zeroizing;
use sha2::{Digest, Sha256};

const MAGIC: &[u8; 4] = b"cmk1";
const KEY_ID_LEN: usize = 8;
const NONCE_LEN: usize = 24;
const HEADER_LEN: usize = MAGIC.len() + KEY_ID_LEN + NONCE_LEN;

/// Why a key could not be read or a value not opened. Never holds key or plaintext bytes.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SealError {
    #[error(
        "{0}: must be 32 random bytes as 64 hex digits or base64 (make one with `openssl rand -hex 32`)"
    )]
    BadKey(&'static str),
    #[error("CREDENTIALS_KEY_FILE: cannot read {path}: {reason}")]
    KeyFile { path: String, reason: String },
    #[error(
        "the stored App credentials were sealed with another key (key id {stored}); CREDENTIALS_KEY has key id {given}{previous}: give the key they were sealed with (during a rotation, the old one as CREDENTIALS_KEY_PREVIOUS)"
    )]
    WrongKey {
        stored: String,
        given: String,
        previous: String,
    },
    #[error("the stored App credentials' `{field}` is not a sealed value or was altered")]
    Corrupt { field: String },
    #[error("the operating system's random source failed: {0}")]
    Random(String),
}

/// A 256-bit credentials key.
#[derive(Clone)]
pub struct CredentialsKey {
    key: Zeroizing<[u8; 32]>,
    id: [u8; KEY_ID_LEN],
}

impl std::fmt::Debug for CredentialsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CredentialsKey(id {})", self.id_hex())
    }
}

impl CredentialsKey {
    /// Reads a key written as 64 hex digits or as base64 of 32 bytes (surrounding whitespace
    /// ignored). `setting` names where it came from, for the error.
    pub fn parse(text: &str, setting: &'static str) -> Result<CredentialsKey, SealError> {
        use base64::Engine;
        let text = text.trim();
        let bytes = Zeroizing::new(if text.len() == 64 {
            hex::decode(text).map_err(|_| SealError::BadKey(setting))?
        } else {
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|_| SealError::BadKey(setting))?
        });
        let key: [u8; 32] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| SealError::BadKey(setting))?;
        Ok(CredentialsKey::from_bytes(key))
    }

    pub fn from_bytes(key: [u8; 32]) -> CredentialsKey {
        let digest = Sha256::new()
            .chain_update(b"ci-medic credentials key id\0")
            .chain_update(key)
            .finalize();
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        CredentialsKey {
            key: Zeroizing::new(key),
            id,
        }
    }

    /// The keys the environment gives: `CREDENTIALS_KEY` (or the file `CREDENTIALS_KEY_FILE`
    /// names) and, during a rotation, `CREDENTIALS_KEY_PREVIOUS`. `Ok(None)`: no key given.
    pub fn from_env() -> Result<Option<Keys>, SealError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let current = match (var("CREDENTIALS_KEY"), var("CREDENTIALS_KEY_FILE")) {
            (Some(k), _) => CredentialsKey::parse(&k, "CREDENTIALS_KEY")?,
            (None, Some(path)) => {
                let text = Zeroizing::new(std::fs::read_to_string(&path).map_err(|e| {
                    SealError::KeyFile {
                        path: path.clone(),
                        reason: e.to_string(),
                    }
                })?);
                CredentialsKey::parse(&text, "CREDENTIALS_KEY_FILE")?
            }
            (None, None) => return Ok(None),
        };
        let previous = var("CREDENTIALS_KEY_PREVIOUS")
            .map(|k| CredentialsKey::parse(&k, "CREDENTIALS_KEY_PREVIOUS"))
            .transpose()?;
        Ok(Some(Keys { current, previous }))
    }

    /// The key id in hex: safe to log and to show.
    pub fn id_hex(&self) -> String {
        hex::encode(self.id)
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(self.key.as_ref().into())
    }

    /// Seals `plaintext` as the value of `field`.
    pub fn seal(&self, field: &str, plaintext: &[u8]) -> Result<Vec<u8>, SealError> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| SealError::Random(e.to_string()))?;
        let aad = aad(field);
        let sealed = self
            .cipher()
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            // Only for messages beyond the cipher's limit (256 GiB): never a credential.
            .map_err(|_| SealError::Corrupt {
                field: field.to_string(),
            })?;
        let mut out = Vec::with_capacity(HEADER_LEN + sealed.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// The key id a sealed value names, when it is one.
    pub fn sealed_key_id(sealed: &[u8]) -> Option<String> {
        (sealed.len() > HEADER_LEN && sealed.starts_with(MAGIC))
            .then(|| hex::encode(&sealed[MAGIC.len()..MAGIC.len() + KEY_ID_LEN]))
    }

    /// Opens a value sealed under this key as `field`.
    fn open(&self, field: &str, sealed: &[u8]) -> Result<Zeroizing<Vec<u8>>, SealError> {
        let corrupt = || SealError::Corrupt {
            field: field.to_string(),
        };
        if sealed.len() <= HEADER_LEN || !sealed.starts_with(MAGIC) {
            return Err(corrupt());
        }
        let nonce = &sealed[MAGIC.len() + KEY_ID_LEN..HEADER_LEN];
        let aad = aad(field);
        self.cipher()
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: &sealed[HEADER_LEN..],
                    aad: &aad,
                },
            )
            .map(Zeroizing::new)
            .map_err(|_| corrupt())
    }
}

fn aad(field: &str) -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.extend_from_slice(field.as_bytes());
    v
}

/// The current key and, during a rotation, the previous one.
#[derive(Clone, Debug)]
pub struct Keys {
    pub current: CredentialsKey,
    pub previous: Option<CredentialsKey>,
}

/// Which key opened a value: a value opened with the previous key is sealed again with the
/// current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenedWith {
    Current,
    Previous,
}

impl Keys {
    pub fn new(current: CredentialsKey) -> Keys {
        Keys {
            current,
            previous: None,
        }
    }

    /// Opens a sealed `field` with whichever given key sealed it.
    pub fn open(
        &self,
        field: &str,
        sealed: &[u8],
    ) -> Result<(Zeroizing<Vec<u8>>, OpenedWith), SealError> {
        let Some(stored) = CredentialsKey::sealed_key_id(sealed) else {
            return Err(SealError::Corrupt {
                field: field.to_string(),
            });
        };
        if stored == self.current.id_hex() {
            return Ok((self.current.open(field, sealed)?, OpenedWith::Current));
        }
        if let Some(p) = &self.previous
            && stored == p.id_hex()
        {
            return Ok((p.open(field, sealed)?, OpenedWith::Previous));
        }
        Err(SealError::WrongKey {
            stored,
            given: self.current.id_hex(),
            previous: self
                .previous
                .as_ref()
                .map(|p| format!(" and CREDENTIALS_KEY_PREVIOUS key id {}", p.id_hex()))
                .unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> CredentialsKey {
        CredentialsKey::from_bytes([b; 32])
    }

    #[test]
    fn a_sealed_value_opens_only_with_its_key_and_field() {
        let k = Keys::new(key(1));
        let sealed = k.current.seal("webhook_secret", b"hook-s3cret").unwrap();
        assert!(!sealed.windows(11).any(|w| w == b"hook-s3cret"));
        let (back, with) = k.open("webhook_secret", &sealed).unwrap();
        assert_eq!(back.as_slice(), b"hook-s3cret");
        assert_eq!(with, OpenedWith::Current);
        // Two seals of one value differ (fresh nonce).
        assert_ne!(
            sealed,
            k.current.seal("webhook_secret", b"hook-s3cret").unwrap()
        );
        // Another field's name does not open it.
        assert!(matches!(
            k.open("private_key_pem", &sealed),
            Err(SealError::Corrupt { .. })
        ));
        // A flipped bit does not open.
        let mut bad = sealed.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(matches!(
            k.open("webhook_secret", &bad),
            Err(SealError::Corrupt { .. })
        ));
        // Another key is a wrong key, said as such, naming key ids only.
        let other = Keys::new(key(2));
        let e = other.open("webhook_secret", &sealed).unwrap_err();
        assert!(matches!(e, SealError::WrongKey { .. }), "{e}");
        assert!(e.to_string().contains(&k.current.id_hex()));
        // During a rotation the previous key opens it.
        let rotating = Keys {
            current: key(2),
            previous: Some(key(1)),
        };
        let (back, with) = rotating.open("webhook_secret", &sealed).unwrap();
        assert_eq!(back.as_slice(), b"hook-s3cret");
        assert_eq!(with, OpenedWith::Previous);
    }

    #[test]
    fn keys_are_read_as_hex_or_base64_and_never_shown() {
        let hex_key = "11".repeat(32);
        let a = CredentialsKey::parse(&hex_key, "CREDENTIALS_KEY").unwrap();
        let b = CredentialsKey::parse("ERERERERERERERERERERERERERERERERERERERERERE=", "X").unwrap();
        assert_eq!(a.id_hex(), b.id_hex());
        assert!(!format!("{a:?}").contains(&hex_key));
        assert_eq!(
            CredentialsKey::parse("too short", "CREDENTIALS_KEY").unwrap_err(),
            SealError::BadKey("CREDENTIALS_KEY")
        );
        assert!(CredentialsKey::parse(&"zz".repeat(32), "CREDENTIALS_KEY").is_err());
    }
}
