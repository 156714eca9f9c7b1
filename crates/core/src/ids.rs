//! Identifier newtypes, so a code_fix id can never be passed where a source DDS id is meant.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Error for a string that is not a well-formed identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a valid {kind} (expected {expected})")]
pub struct IdError {
    pub kind: &'static str,
    pub expected: &'static str,
    pub value: String,
}

/// `DDS-FIX-YYYYMMDD-NNN`: the id of a code_fix DDS (validation rule 1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FixDdsId(String);

impl FixDdsId {
    /// Builds the id for a day (`YYYYMMDD`) and a per-day sequence number (1..=999).
    pub fn new(day: chrono::NaiveDate, seq: u16) -> Result<Self, IdError> {
        if seq == 0 || seq > 999 {
            return Err(IdError {
                kind: "code_fix DDS sequence number",
                expected: "1 to 999",
                value: seq.to_string(),
            });
        }
        Ok(FixDdsId(format!(
            "DDS-FIX-{}-{seq:03}",
            day.format("%Y%m%d")
        )))
    }

    /// Parses and checks the format `DDS-FIX-\d{8}-\d{3}` exactly.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        if is_fix_dds_id(s) {
            Ok(FixDdsId(s.to_string()))
        } else {
            Err(IdError {
                kind: "code_fix DDS id",
                expected: "DDS-FIX-YYYYMMDD-NNN",
                value: s.to_string(),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// True when `s` is exactly `DDS-FIX-` + 8 digits + `-` + 3 digits.
pub fn is_fix_dds_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && s.starts_with("DDS-FIX-")
        && b[8..16].iter().all(u8::is_ascii_digit)
        && b[16] == b'-'
        && b[17..20].iter().all(u8::is_ascii_digit)
}

impl TryFrom<String> for FixDdsId {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, IdError> {
        FixDdsId::parse(&s)
    }
}

impl From<FixDdsId> for String {
    fn from(id: FixDdsId) -> String {
        id.0
    }
}

impl fmt::Display for FixDdsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of any DDS (a failed `code_change` record, or a code_fix acting as a source).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DdsId(pub String);

impl DdsId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<FixDdsId> for DdsId {
    fn from(id: FixDdsId) -> Self {
        DdsId(id.0)
    }
}

impl fmt::Display for DdsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fix_id_format() {
        let day = chrono::NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
        assert_eq!(
            FixDdsId::new(day, 1).unwrap().as_str(),
            "DDS-FIX-20260202-001"
        );
        assert!(FixDdsId::new(day, 0).is_err());
        assert!(FixDdsId::new(day, 1000).is_err());
        assert!(FixDdsId::parse("DDS-FIX-20260202-001").is_ok());
        for bad in [
            "DDS-FIX-2026020-001",
            "DDS-FIX-20260202-01",
            "dds-fix-20260202-001",
            "DDS-FIX-20260202-0011",
            "DDS-FIX-2026O202-001",
        ] {
            assert!(FixDdsId::parse(bad).is_err(), "{bad}");
        }
    }
}
