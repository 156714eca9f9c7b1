//! Where ci-medic is installed: installation id → account and repositories, from the
//! `installation` and `installation_repositories` webhooks.
//!
//! It is a record for operators and for forgetting work: when a repository is removed (or the
//! whole installation deleted) the orchestrator finishes that repository's runs. It must never
//! be used to decide whether a webhook is trusted (the signature does that), and never keeps
//! anything from the payload beyond names.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{StoreError, decode, get_json};

/// One installation as last seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installation {
    pub id: u64,
    /// The user or organisation it is installed on, when the payload said.
    pub account: Option<String>,
    /// `owner/name` of every repository known to be covered, sorted.
    pub repositories: BTreeSet<String>,
    pub updated_at: DateTime<Utc>,
}

/// The `installations` tree.
#[derive(Clone)]
pub struct Installations {
    tree: sled::Tree,
}

impl Installations {
    pub fn open(store: &super::Store) -> Result<Installations, StoreError> {
        Ok(Installations {
            tree: store.db().open_tree("installations")?,
        })
    }

    pub fn get(&self, id: u64) -> Result<Option<Installation>, StoreError> {
        get_json(&self.tree, &id.to_be_bytes())
    }

    /// Every installation, by id.
    pub fn all(&self) -> Result<Vec<Installation>, StoreError> {
        let mut out = Vec::new();
        for item in self.tree.iter() {
            let (k, v) = item?;
            out.push(decode(&k, &v)?);
        }
        Ok(out)
    }

    /// Applies one change. `deleted` drops the installation; otherwise `added` repositories are
    /// recorded and `removed` ones forgotten. Returns the record as it now stands (`None` when
    /// deleted). Written and flushed before returning.
    pub fn apply(
        &self,
        id: u64,
        account: Option<&str>,
        deleted: bool,
        added: &[String],
        removed: &[String],
    ) -> Result<Option<Installation>, StoreError> {
        let key = id.to_be_bytes();
        if deleted {
            self.tree.remove(key)?;
            self.tree.flush()?;
            return Ok(None);
        }
        // Read, change and write as one compare-and-swap: two changes at once (the events
        // of one installation handled by two workers) both land.
        let now = Utc::now();
        let updated = self.tree.update_and_fetch(key, |old| {
            let mut rec = old
                .and_then(|v| serde_json::from_slice::<Installation>(v).ok())
                .unwrap_or(Installation {
                    id,
                    account: None,
                    repositories: BTreeSet::new(),
                    updated_at: now,
                });
            if let Some(a) = account {
                rec.account = Some(a.to_string());
            }
            rec.repositories.extend(added.iter().cloned());
            for r in removed {
                rec.repositories.remove(r);
            }
            rec.updated_at = now;
            Some(serde_json::to_vec(&rec).expect("installation serialises"))
        })?;
        self.tree.flush()?;
        match updated {
            Some(v) => Ok(Some(decode(&key, &v)?)),
            None => Ok(None),
        }
    }

    /// The installation covering `repo`, if one is recorded.
    pub fn for_repo(&self, repo: &str) -> Result<Option<Installation>, StoreError> {
        Ok(self
            .all()?
            .into_iter()
            .find(|i| i.repositories.contains(repo)))
    }
}

#[cfg(test)]
mod tests {
    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[tokio::test]
    async fn records_adds_removes_and_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let store = super::super::Store::open(dir.path()).unwrap();
        let inst = store.installations().unwrap();
        inst.apply(7, Some("octo"), false, &s(&["octo/a", "octo/b"]), &[])
            .unwrap();
        let r = inst
            .apply(7, None, false, &s(&["octo/c"]), &s(&["octo/a"]))
            .unwrap()
            .unwrap();
        assert_eq!(r.account.as_deref(), Some("octo"));
        assert_eq!(
            r.repositories.iter().cloned().collect::<Vec<_>>(),
            s(&["octo/b", "octo/c"])
        );
        assert_eq!(inst.for_repo("octo/c").unwrap().unwrap().id, 7);
        assert!(inst.for_repo("octo/a").unwrap().is_none());
        assert!(inst.apply(7, None, true, &[], &[]).unwrap().is_none());
        assert!(inst.get(7).unwrap().is_none());
        assert!(inst.all().unwrap().is_empty());
    }
}
