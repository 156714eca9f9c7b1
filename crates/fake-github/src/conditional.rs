//! Conditional requests, as GitHub answers them: every successful `GET` carries an `ETag`
//! (a digest of the body, so it changes exactly when the representation does), and a `GET`
//! whose `If-None-Match` names the current one gets `304 Not Modified` with no body and the
//! same `ETag`. A 304 is not counted against the rate limit (GitHub: "Making a conditional
//! request does not count against your primary rate limit if a 304 response is returned").
//!
//! Pure over a response: it never touches the fake's state.

use sha2::{Digest, Sha256};

/// The entity tag of a body, in GitHub's weak form (`W/"<hex>"`).
pub(crate) fn etag(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    format!("W/\"{}\"", hex::encode(&digest[..20]))
}

/// RFC 9110 §13.1.2: `If-None-Match` is a list of entity tags (or `*`) compared weakly, so a
/// `W/` prefix on either side is ignored.
pub(crate) fn matches(if_none_match: &str, current: &str) -> bool {
    let opaque = |t: &str| t.trim().trim_start_matches("W/").to_string();
    let current = opaque(current);
    if_none_match
        .split(',')
        .any(|t| t.trim() == "*" || opaque(t) == current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_comparison_over_a_list() {
        let t = etag(b"{}");
        assert!(t.starts_with("W/\"") && t.ends_with('"'));
        assert!(matches(&t, &t));
        assert!(matches(&t.replace("W/", ""), &t));
        assert!(matches(&format!("\"x\", {t}"), &t));
        assert!(matches("*", &t));
        assert!(!matches(&etag(b"[]"), &t));
    }
}
