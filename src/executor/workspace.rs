//! Building a workspace on the host: a repository tarball at a commit, plus a candidate patch.
//!
//! [`extract_tarball_safely`] unpacks GitHub's `tar.gz` layout (one top-level directory) and
//! refuses anything that could write or point outside the destination: `..`, absolute paths,
//! entries written through symbolic links, links whose target leaves the tree, device nodes.
//! [`apply_files`] writes the patch's full file contents with the same rules.
//!
//! It also packs a workspace into the tar stream uploaded into the sandbox container
//! ([`write_workspace_tar`]), so the host tree is never mounted and never modified.
//!
//! This module never downloads anything (the GitHub client does) and never runs anything.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum WorkspaceError {
    #[error("archive entry `{path}` is unsafe: {reason}")]
    UnsafePath { path: String, reason: &'static str },
    #[error("archive entry `{path}` is a {kind}, which a source tarball never holds")]
    UnsupportedEntry { path: String, kind: String },
    #[error("the archive is not GitHub's layout: {0}")]
    Layout(String),
    #[error("the archive unpacks to more than {limit} {what}")]
    TooLarge { what: &'static str, limit: u64 },
    #[error("destination `{0}` already exists and is not empty")]
    DestinationNotEmpty(PathBuf),
    #[error("I/O error at `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("reading the archive: {0}")]
    Archive(#[source] io::Error),
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> WorkspaceError + '_ {
    move |source| WorkspaceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Bounds on what an archive may unpack to, against decompression bombs.
#[derive(Debug, Clone, Copy)]
pub struct ExtractLimits {
    pub max_total_bytes: u64,
    pub max_entries: u64,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        ExtractLimits {
            max_total_bytes: 4 << 30,
            max_entries: 1_000_000,
        }
    }
}

/// A path from an archive or a patch split into plain components, or why it is refused.
fn safe_components(raw: &Path) -> Result<Vec<&std::ffi::OsStr>, &'static str> {
    let mut parts = Vec::new();
    for c in raw.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            Component::ParentDir => return Err("it contains `..`"),
            Component::RootDir | Component::Prefix(_) => return Err("it is absolute"),
        }
    }
    if parts.is_empty() {
        return Err("it is empty");
    }
    Ok(parts)
}

/// Refuses to write at `target` (inside `root`) when any existing component between `root` and
/// `target`, or `target` itself, is a symbolic link: writing through a link is how an archive
/// or a patch reaches outside the tree. Git never stores a path below a symlink, so a real
/// repository never trips this.
fn ensure_no_symlink_on_path(root: &Path, rel: &[&std::ffi::OsStr]) -> Result<(), &'static str> {
    let mut cur = root.to_path_buf();
    for part in rel {
        cur.push(part);
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Err("it goes through a symbolic link"),
            Ok(_) => {}
            Err(_) => break, // Nothing further exists yet, so nothing further can be a link.
        }
    }
    Ok(())
}

/// Whether the link at `link_rel` (components relative to the root) with `target` stays inside
/// the root when resolved lexically from the link's own directory.
fn link_target_stays_inside(link_rel: &[&std::ffi::OsStr], target: &Path) -> bool {
    let mut depth: Vec<&std::ffi::OsStr> = link_rel[..link_rel.len() - 1].to_vec();
    for c in target.components() {
        match c {
            Component::Normal(p) => depth.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

fn display(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Unpacks a GitHub repository tarball (`tar.gz`, one top-level directory named
/// `<owner>-<repo>-<sha>`) into `dest`, which must not exist or be empty, and returns the
/// repository root inside it.
///
/// Refused: paths with `..`, absolute paths, entries outside the single top-level directory,
/// entries written through a symbolic link, symbolic links whose target is absolute or resolves
/// outside the tree, hard links to anything but a regular file already unpacked inside the tree
/// (they are unpacked as copies), device nodes and FIFOs. Set-uid and other special mode bits
/// are never restored. On error, `dest` may hold a partial tree: the caller throws it away.
pub fn extract_tarball_safely(reader: impl Read, dest: &Path) -> Result<PathBuf, WorkspaceError> {
    extract_tarball_safely_with_limits(reader, dest, ExtractLimits::default())
}

/// [`extract_tarball_safely`] with explicit size limits.
pub fn extract_tarball_safely_with_limits(
    reader: impl Read,
    dest: &Path,
    limits: ExtractLimits,
) -> Result<PathBuf, WorkspaceError> {
    if dest.exists() {
        let mut it = fs::read_dir(dest).map_err(io_at(dest))?;
        if it.next().is_some() {
            return Err(WorkspaceError::DestinationNotEmpty(dest.to_path_buf()));
        }
    }
    fs::create_dir_all(dest).map_err(io_at(dest))?;
    let dest = fs::canonicalize(dest).map_err(io_at(dest))?;

    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(reader));
    let mut top: Option<std::ffi::OsString> = None;
    let mut total_bytes = 0u64;
    let mut entries = 0u64;
    let mut links: Vec<PathBuf> = Vec::new();

    for entry in archive.entries().map_err(WorkspaceError::Archive)? {
        let mut entry = entry.map_err(WorkspaceError::Archive)?;
        let kind = entry.header().entry_type();
        // Metadata-only records: GitHub's tarballs open with a pax global header holding the
        // commit id.
        if matches!(
            kind,
            tar::EntryType::XGlobalHeader
                | tar::EntryType::XHeader
                | tar::EntryType::GNULongName
                | tar::EntryType::GNULongLink
        ) {
            continue;
        }
        entries += 1;
        if entries > limits.max_entries {
            return Err(WorkspaceError::TooLarge {
                what: "entries",
                limit: limits.max_entries,
            });
        }
        let raw = entry.path().map_err(WorkspaceError::Archive)?.into_owned();
        let unsafe_path = |reason| WorkspaceError::UnsafePath {
            path: display(&raw),
            reason,
        };
        let parts = safe_components(&raw).map_err(unsafe_path)?;
        match &top {
            None => top = Some(parts[0].to_os_string()),
            Some(t) if t.as_os_str() == parts[0] => {}
            Some(t) => {
                return Err(WorkspaceError::Layout(format!(
                    "entry `{}` is outside the top-level directory `{}`",
                    display(&raw),
                    t.to_string_lossy()
                )));
            }
        }
        ensure_no_symlink_on_path(&dest, &parts).map_err(unsafe_path)?;
        let target = parts.iter().fold(dest.clone(), |p, c| p.join(c));

        match kind {
            tar::EntryType::Directory => {
                fs::create_dir_all(&target).map_err(io_at(&target))?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let size = entry.header().size().map_err(WorkspaceError::Archive)?;
                total_bytes += size;
                if total_bytes > limits.max_total_bytes {
                    return Err(WorkspaceError::TooLarge {
                        what: "bytes",
                        limit: limits.max_total_bytes,
                    });
                }
                let mode = entry.header().mode().unwrap_or(0o644);
                create_parent(&target)?;
                let mut file = fs::File::create(&target).map_err(io_at(&target))?;
                // `take` so a header lying about its size cannot write more than it declared.
                io::copy(&mut (&mut entry).take(size), &mut file).map_err(io_at(&target))?;
                set_plain_mode(&target, mode)?;
            }
            tar::EntryType::Symlink => {
                let link = entry
                    .link_name()
                    .map_err(WorkspaceError::Archive)?
                    .ok_or_else(|| unsafe_path("it is a link without a target"))?
                    .into_owned();
                if parts.len() < 2 || !link_target_stays_inside(&parts[1..], &link) {
                    return Err(unsafe_path(
                        "it is a symbolic link pointing outside the tree",
                    ));
                }
                create_parent(&target)?;
                make_symlink(&link, &target)?;
                links.push(target);
            }
            tar::EntryType::Link => {
                let link = entry
                    .link_name()
                    .map_err(WorkspaceError::Archive)?
                    .ok_or_else(|| unsafe_path("it is a link without a target"))?
                    .into_owned();
                let link_parts = safe_components(&link)
                    .map_err(|_| unsafe_path("it is a hard link pointing outside the tree"))?;
                if Some(link_parts[0]) != top.as_deref() {
                    return Err(unsafe_path("it is a hard link pointing outside the tree"));
                }
                ensure_no_symlink_on_path(&dest, &link_parts).map_err(unsafe_path)?;
                let source = link_parts.iter().fold(dest.clone(), |p, c| p.join(c));
                let meta = fs::symlink_metadata(&source)
                    .map_err(|_| unsafe_path("it is a hard link to nothing unpacked before it"))?;
                if !meta.is_file() {
                    return Err(unsafe_path("it is a hard link to something not a file"));
                }
                create_parent(&target)?;
                // A copy, not a link: a later patch to one path must not change the other.
                fs::copy(&source, &target).map_err(io_at(&target))?;
            }
            other => {
                return Err(WorkspaceError::UnsupportedEntry {
                    path: display(&raw),
                    kind: format!("{other:?}"),
                });
            }
        }
    }

    let top = top.ok_or_else(|| WorkspaceError::Layout("the archive is empty".to_owned()))?;
    let root = dest.join(top);
    // A chain of links can escape even when each one alone looks inside (`a/b/s -> ../..`
    // then `a/b/t -> s/..`): resolve every link for real now that the whole tree exists.
    for link in links {
        if let Ok(resolved) = fs::canonicalize(&link)
            && !resolved.starts_with(&root)
        {
            let rel = link.strip_prefix(&root).unwrap_or(&link);
            return Err(WorkspaceError::UnsafePath {
                path: display(rel),
                reason: "it is a symbolic link resolving outside the tree",
            });
        }
    }
    Ok(root)
}

fn create_parent(target: &Path) -> Result<(), WorkspaceError> {
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(io_at(parent))?;
    }
    Ok(())
}

#[cfg(unix)]
fn make_symlink(link: &Path, at: &Path) -> Result<(), WorkspaceError> {
    std::os::unix::fs::symlink(link, at).map_err(io_at(at))
}

#[cfg(not(unix))]
fn make_symlink(_link: &Path, at: &Path) -> Result<(), WorkspaceError> {
    Err(WorkspaceError::UnsupportedEntry {
        path: display(at),
        kind: "symbolic link on this platform".to_owned(),
    })
}

/// Keeps only the executable bit: `0755` or `0644`, never set-uid, set-gid or sticky.
#[cfg(unix)]
fn set_plain_mode(target: &Path, mode: u32) -> Result<(), WorkspaceError> {
    use std::os::unix::fs::PermissionsExt;
    let plain = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
    fs::set_permissions(target, fs::Permissions::from_mode(plain)).map_err(io_at(target))
}

#[cfg(not(unix))]
fn set_plain_mode(_target: &Path, _mode: u32) -> Result<(), WorkspaceError> {
    Ok(())
}

/// Writes full file contents (a candidate patch) into the workspace at `root`.
///
/// Every path must be relative, without `..`, and must not go through or land on a symbolic
/// link; all are checked before any is written, so a refused patch leaves the tree untouched.
/// Parent directories are created. Existing files keep their permissions.
pub fn apply_files<P: AsRef<Path>, C: AsRef<[u8]>>(
    root: &Path,
    files: &[(P, C)],
) -> Result<(), WorkspaceError> {
    let mut seen = HashSet::new();
    let mut targets = Vec::with_capacity(files.len());
    for (path, _) in files {
        let raw = path.as_ref();
        let unsafe_path = |reason| WorkspaceError::UnsafePath {
            path: display(raw),
            reason,
        };
        let parts = safe_components(raw).map_err(unsafe_path)?;
        ensure_no_symlink_on_path(root, &parts).map_err(unsafe_path)?;
        let target = parts.iter().fold(root.to_path_buf(), |p, c| p.join(c));
        if target.is_dir() {
            return Err(unsafe_path("it is a directory"));
        }
        if !seen.insert(target.clone()) {
            return Err(unsafe_path("it appears twice in the patch"));
        }
        targets.push(target);
    }
    for (target, (_, content)) in targets.iter().zip(files) {
        create_parent(target)?;
        fs::write(target, content.as_ref()).map_err(io_at(target))?;
    }
    Ok(())
}

/// Packs the tree at `root` as a tar stream whose entries live under `prefix/` and belong to
/// `uid:gid`, for upload into a container. Regular files, directories and symbolic links
/// (as links, never followed) are packed in a stable order; sockets and FIFOs are skipped.
pub fn write_workspace_tar<W: Write>(
    root: &Path,
    prefix: &str,
    uid: u64,
    gid: u64,
    out: W,
) -> Result<W, WorkspaceError> {
    let mut builder = tar::Builder::new(out);
    builder.follow_symlinks(false);
    let dir_header = |uid, gid| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Directory);
        h.set_mode(0o755);
        h.set_uid(uid);
        h.set_gid(gid);
        h.set_size(0);
        h
    };
    let mut h = dir_header(uid, gid);
    builder
        .append_data(&mut h, prefix, io::empty())
        .map_err(io_at(root))?;

    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut children: Vec<_> = fs::read_dir(&dir)
            .map_err(io_at(&dir))?
            .collect::<Result<_, _>>()
            .map_err(io_at(&dir))?;
        children.sort_by_key(|e| e.file_name());
        for child in children {
            let path = child.path();
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let name = Path::new(prefix).join(rel);
            let meta = fs::symlink_metadata(&path).map_err(io_at(&path))?;
            let ft = meta.file_type();
            if ft.is_dir() {
                let mut h = dir_header(uid, gid);
                builder
                    .append_data(&mut h, &name, io::empty())
                    .map_err(io_at(&path))?;
                stack.push(path);
            } else if ft.is_file() {
                let mut h = tar::Header::new_gnu();
                h.set_metadata_in_mode(&meta, tar::HeaderMode::Deterministic);
                h.set_mode(if is_executable(&meta) { 0o755 } else { 0o644 });
                h.set_uid(uid);
                h.set_gid(gid);
                let file = fs::File::open(&path).map_err(io_at(&path))?;
                builder
                    .append_data(&mut h, &name, file)
                    .map_err(io_at(&path))?;
            } else if ft.is_symlink() {
                let target = fs::read_link(&path).map_err(io_at(&path))?;
                let mut h = tar::Header::new_gnu();
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_uid(uid);
                h.set_gid(gid);
                h.set_size(0);
                builder
                    .append_link(&mut h, &name, &target)
                    .map_err(io_at(&path))?;
            }
        }
    }
    builder.into_inner().map_err(io_at(root))
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;

    /// A raw tar entry whose name bypasses the `tar` crate's own path checks, as an attacker's
    /// archive would.
    fn raw_header(name: &str, kind: tar::EntryType, size: u64, link: Option<&str>) -> tar::Header {
        let mut h = tar::Header::new_old();
        {
            let old = h.as_old_mut();
            old.name[..name.len()].copy_from_slice(name.as_bytes());
            if let Some(l) = link {
                old.linkname[..l.len()].copy_from_slice(l.as_bytes());
            }
        }
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        h
    }

    enum E<'a> {
        Dir(&'a str),
        File(&'a str, &'a str),
        Sym(&'a str, &'a str),
        Hard(&'a str, &'a str),
        Fifo(&'a str),
    }

    fn tarball(entries: &[E]) -> Vec<u8> {
        let mut b = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        // GitHub's tarballs start with a pax global header carrying the commit.
        let comment = b"52 comment=0123456789abcdef0123456789abcdef01234567\n";
        let h = raw_header(
            "pax_global_header",
            tar::EntryType::XGlobalHeader,
            comment.len() as u64,
            None,
        );
        b.append(&h, &comment[..]).unwrap();
        for e in entries {
            match *e {
                E::Dir(p) => {
                    let h = raw_header(p, tar::EntryType::Directory, 0, None);
                    b.append(&h, io::empty()).unwrap();
                }
                E::File(p, c) => {
                    let h = raw_header(p, tar::EntryType::Regular, c.len() as u64, None);
                    b.append(&h, c.as_bytes()).unwrap();
                }
                E::Sym(p, t) => {
                    let h = raw_header(p, tar::EntryType::Symlink, 0, Some(t));
                    b.append(&h, io::empty()).unwrap();
                }
                E::Hard(p, t) => {
                    let h = raw_header(p, tar::EntryType::Link, 0, Some(t));
                    b.append(&h, io::empty()).unwrap();
                }
                E::Fifo(p) => {
                    let h = raw_header(p, tar::EntryType::Fifo, 0, None);
                    b.append(&h, io::empty()).unwrap();
                }
            }
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    fn extract(entries: &[E]) -> (tempfile::TempDir, Result<PathBuf, WorkspaceError>) {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("ws");
        let res = extract_tarball_safely(&tarball(entries)[..], &dest);
        (tmp, res)
    }

    fn assert_unsafe(entries: &[E], why: &str) {
        let (tmp, res) = extract(entries);
        match res {
            Err(WorkspaceError::UnsafePath { reason, .. }) => {
                assert!(reason.contains(why), "{reason}")
            }
            other => panic!("expected refusal ({why}), got {other:?}"),
        }
        // Nothing was written beside the destination.
        let outside: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(outside, vec![std::ffi::OsString::from("ws")]);
    }

    #[test]
    fn extracts_githubs_layout_and_returns_the_repo_root() {
        let (_tmp, res) = extract(&[
            E::Dir("o-r-abc/"),
            E::File("o-r-abc/src/main.py", "print(1)\n"),
            E::Sym("o-r-abc/link", "src/main.py"),
            E::Hard("o-r-abc/copy.py", "o-r-abc/src/main.py"),
        ]);
        let root = res.unwrap();
        assert!(root.ends_with("o-r-abc"));
        assert_eq!(
            fs::read_to_string(root.join("src/main.py")).unwrap(),
            "print(1)\n"
        );
        assert_eq!(fs::read_to_string(root.join("link")).unwrap(), "print(1)\n");
        assert_eq!(
            fs::read_to_string(root.join("copy.py")).unwrap(),
            "print(1)\n"
        );
        assert!(
            !fs::symlink_metadata(root.join("copy.py"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn refuses_parent_dir_paths() {
        assert_unsafe(
            &[E::Dir("o-r-abc/"), E::File("o-r-abc/../../x", "evil")],
            "..",
        );
    }

    #[test]
    fn refuses_absolute_paths() {
        assert_unsafe(&[E::File("/tmp/ci-medic-evil", "evil")], "absolute");
    }

    #[test]
    fn refuses_symlinks_pointing_outside() {
        assert_unsafe(
            &[E::Dir("o-r-abc/"), E::Sym("o-r-abc/l", "../../etc")],
            "outside",
        );
        assert_unsafe(
            &[E::Dir("o-r-abc/"), E::Sym("o-r-abc/l", "/etc/passwd")],
            "outside",
        );
    }

    #[test]
    fn refuses_writing_through_a_symlink() {
        assert_unsafe(
            &[
                E::Dir("o-r-abc/"),
                E::Dir("o-r-abc/d/"),
                E::Sym("o-r-abc/l", "d"),
                E::File("o-r-abc/l/x", "via link"),
            ],
            "symbolic link",
        );
    }

    #[test]
    fn refuses_chained_symlinks_escaping_together() {
        assert_unsafe(
            &[
                E::Dir("o-r-abc/a/b/"),
                E::Sym("o-r-abc/a/b/s", "../.."),
                E::Sym("o-r-abc/a/b/t", "s/.."),
            ],
            "resolving outside",
        );
    }

    #[test]
    fn refuses_hardlinks_escaping() {
        assert_unsafe(
            &[E::Dir("o-r-abc/"), E::Hard("o-r-abc/h", "/etc/passwd")],
            "hard link",
        );
        assert_unsafe(
            &[
                E::Dir("o-r-abc/"),
                E::Hard("o-r-abc/h", "o-r-abc/../../etc/passwd"),
            ],
            "hard link",
        );
        assert_unsafe(
            &[E::Dir("o-r-abc/"), E::Hard("o-r-abc/h", "other-top/file")],
            "hard link",
        );
    }

    #[test]
    fn refuses_hardlink_through_a_symlink() {
        assert_unsafe(
            &[
                E::Dir("o-r-abc/"),
                E::Sym("o-r-abc/up", "."),
                E::Hard("o-r-abc/h", "o-r-abc/up/x"),
            ],
            "symbolic link",
        );
    }

    #[test]
    fn refuses_a_second_top_level_directory() {
        let (_tmp, res) = extract(&[E::File("a/x", "1"), E::File("b/y", "2")]);
        assert!(matches!(res, Err(WorkspaceError::Layout(_))), "{res:?}");
    }

    #[test]
    fn refuses_fifos_and_empty_archives() {
        let (_tmp, res) = extract(&[E::Dir("o-r-abc/"), E::Fifo("o-r-abc/p")]);
        assert!(
            matches!(res, Err(WorkspaceError::UnsupportedEntry { .. })),
            "{res:?}"
        );
        let (_tmp, res) = extract(&[]);
        assert!(matches!(res, Err(WorkspaceError::Layout(_))), "{res:?}");
    }

    #[test]
    fn refuses_a_non_empty_destination() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("x"), "").unwrap();
        let res = extract_tarball_safely(&tarball(&[E::File("o/x", "1")])[..], tmp.path());
        assert!(matches!(res, Err(WorkspaceError::DestinationNotEmpty(_))));
    }

    #[test]
    fn enforces_size_limits() {
        let tmp = tempfile::tempdir().unwrap();
        let res = extract_tarball_safely_with_limits(
            &tarball(&[E::File("o/a", "12345"), E::File("o/b", "12345")])[..],
            &tmp.path().join("ws"),
            ExtractLimits {
                max_total_bytes: 8,
                max_entries: 100,
            },
        );
        assert!(matches!(
            res,
            Err(WorkspaceError::TooLarge { what: "bytes", .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn never_restores_setuid_bits() {
        use std::os::unix::fs::PermissionsExt;
        let mut b = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        let mut h = raw_header("o/run.sh", tar::EntryType::Regular, 2, None);
        h.set_mode(0o4755);
        h.set_cksum();
        b.append(&h, &b"hi"[..]).unwrap();
        let gz = b.into_inner().unwrap().finish().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let root = extract_tarball_safely(&gz[..], &tmp.path().join("ws")).unwrap();
        let mode = fs::metadata(root.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o755);
    }

    #[test]
    fn apply_files_writes_and_refuses_escapes_atomically() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.py"), "old\n").unwrap();
        apply_files(&root, &[("src/a.py", "new\n"), ("src/new/b.py", "b\n")]).unwrap();
        assert_eq!(fs::read_to_string(root.join("src/a.py")).unwrap(), "new\n");
        assert_eq!(
            fs::read_to_string(root.join("src/new/b.py")).unwrap(),
            "b\n"
        );

        for bad in ["../x", "/etc/x", "", "src/../../x"] {
            let err = apply_files(&root, &[("src/a.py", "changed"), (bad, "evil")]).unwrap_err();
            assert!(
                matches!(err, WorkspaceError::UnsafePath { .. }),
                "{bad}: {err}"
            );
            // Checked before writing: the valid entry was not applied either.
            assert_eq!(fs::read_to_string(root.join("src/a.py")).unwrap(), "new\n");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.path(), root.join("out")).unwrap();
            let err = apply_files(&root, &[("out/x", "evil")]).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{err}");
            std::os::unix::fs::symlink("/etc/hostname", root.join("host")).unwrap();
            let err = apply_files(&root, &[("host", "evil")]).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{err}");
            assert!(!tmp.path().join("x").exists());
        }
        let err = apply_files(&root, &[("src", "x")]).unwrap_err();
        assert!(err.to_string().contains("directory"), "{err}");
    }

    #[test]
    fn workspace_tar_round_trips_with_owner_and_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("b/c")).unwrap();
        fs::write(root.join("b/c/f.txt"), "data").unwrap();
        fs::write(root.join("a.txt"), "a").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.txt", root.join("l")).unwrap();
        let bytes = write_workspace_tar(root, "workspace", 65534, 65534, Vec::new()).unwrap();
        let mut ar = tar::Archive::new(&bytes[..]);
        let mut seen = Vec::new();
        for e in ar.entries().unwrap() {
            let e = e.unwrap();
            assert_eq!(e.header().uid().unwrap(), 65534);
            assert_eq!(e.header().gid().unwrap(), 65534);
            seen.push(
                e.path()
                    .unwrap()
                    .to_string_lossy()
                    .trim_end_matches('/')
                    .to_owned(),
            );
        }
        assert_eq!(seen[0], "workspace");
        for want in ["workspace/a.txt", "workspace/b", "workspace/b/c/f.txt"] {
            assert!(seen.iter().any(|s| s == want), "{want} in {seen:?}");
        }
        #[cfg(unix)]
        assert!(seen.iter().any(|s| s == "workspace/l"));
    }
}
