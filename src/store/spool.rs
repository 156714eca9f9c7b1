//! The payload spool: webhook payloads in append-only segment files beside the sled database.
//!
//! It is also the intake's write-ahead log: each record carries the delivery's metadata next to
//! its payload, so a delivery is durable once its record is, and [`Spool::sync`] (one
//! `fdatasync`, shared by all concurrent deliveries) is all an acknowledgement waits for. Sled
//! flushes in the background; after a crash the store replays the records past its last
//! checkpoint ([`Spool::scan_from`]).
//!
//! Payloads do not belong in sled anyway: it turns every value over ~4 KiB into a blob file of
//! its own (a file creation per webhook) and rewrites large leaves when it consolidates them.
//!
//! Each record is `[len: u32 LE][crc32: u32 LE][meta_len: u32 LE][meta][payload]` (the checksum
//! covers everything after it); a [`PayloadRef`] (segment, offset, length) stored with the
//! delivery record in sled finds it again. A record whose checksum does not match reads as
//! [`SpoolError::Corrupt`], never as a wrong payload. At open, a torn tail of the newest
//! segment (a crash mid-append, before any acknowledgement) is cut off.
//!
//! It must never interpret payloads, log their bytes, or delete a segment a delivery record
//! or the replay still needs (see [`Spool::retain`]).

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// Where a record lives in the spool (`len` is the length of its body, after the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayloadRef {
    pub segment: u64,
    pub offset: u64,
    pub len: u32,
}

/// A position in the spool: records before it precede records after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SpoolPos {
    pub segment: u64,
    pub offset: u64,
}

/// One record read back: the metadata the writer stored, and the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub meta: Vec<u8>,
    pub payload: Vec<u8>,
}

impl Record {
    fn decode(body: Vec<u8>) -> Option<Record> {
        let meta_len = u32::from_le_bytes(body.get(..4)?.try_into().ok()?) as usize;
        let meta = body.get(4..4 + meta_len)?.to_vec();
        let mut payload = body;
        payload.drain(..4 + meta_len);
        Some(Record { meta, payload })
    }
}

/// Errors from the spool. Messages name files and offsets, never payload bytes.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("payload spool I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("payload at segment {segment} offset {offset} is corrupt or incomplete")]
    Corrupt { segment: u64, offset: u64 },
    #[error("payload of {0} bytes is larger than a spool record can hold")]
    TooLarge(usize),
}

const HEADER: u64 = 8;
/// A segment is closed and a new one started once it passes this size.
const SEGMENT_BYTES: u64 = 64 * 1024 * 1024;

/// Handle to the spool directory. Cheap to clone.
#[derive(Clone)]
pub struct Spool {
    dir: PathBuf,
    state: Arc<Mutex<Active>>,
}

struct Active {
    segment: u64,
    file: Arc<File>,
    len: u64,
    /// Files written since the last sync (the active one, and any closed since).
    unsynced: Vec<Arc<File>>,
    /// A segment was created since the last sync: its directory entry is not durable yet.
    /// `fdatasync` of a new file does not persist its name, so after a power loss the file, and
    /// the acknowledged records in it, could be gone.
    dir_unsynced: bool,
}

/// `fsync` of a directory: makes the names created in it durable.
fn sync_dir(dir: &Path) -> Result<(), SpoolError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SpoolError + '_ {
    move |source| SpoolError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn segment_path(dir: &Path, segment: u64) -> PathBuf {
    dir.join(format!("{segment:016}.spool"))
}

/// The segment numbers present in `dir`, ascending.
fn segments(dir: &Path) -> Result<BTreeSet<u64>, SpoolError> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name();
        if let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".spool"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            out.insert(n);
        }
    }
    Ok(out)
}

/// Walks the whole, checksummed records of `file` from `start`, handing each (offset, body) to
/// `each`; returns where the valid records end (a torn or corrupt record ends the walk).
fn walk(
    file: &File,
    path: &Path,
    start: u64,
    mut each: impl FnMut(u64, Vec<u8>),
) -> Result<u64, SpoolError> {
    use std::io::Seek;
    let size = file.metadata().map_err(io_err(path))?.len();
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    reader
        .seek(std::io::SeekFrom::Start(start))
        .map_err(io_err(path))?;
    let mut pos = start;
    let mut header = [0u8; HEADER as usize];
    while pos + HEADER <= size {
        if reader.read_exact(&mut header).is_err() {
            break;
        }
        let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as u64;
        let crc = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        if pos + HEADER + len > size {
            break;
        }
        let mut body = vec![0u8; len as usize];
        if reader.read_exact(&mut body).is_err() || crc32fast::hash(&body) != crc {
            break;
        }
        each(pos, body);
        pos += HEADER + len;
    }
    Ok(pos)
}

impl Spool {
    /// Opens (or creates) the spool in `dir`, cutting off a torn tail of the newest segment.
    pub fn open(dir: &Path) -> Result<Spool, SpoolError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let segment = segments(dir)?.last().copied().unwrap_or(1);
        let path = segment_path(dir, segment);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err(&path))?;
        let len = walk(&file, &path, 0, |_, _| {})?;
        if len != file.metadata().map_err(io_err(&path))?.len() {
            tracing::warn!(
                segment,
                valid_bytes = len,
                "cutting off a torn tail of the payload spool (an append interrupted by a crash)"
            );
            file.set_len(len).map_err(io_err(&path))?;
            file.sync_all().map_err(io_err(&path))?;
        }
        // The spool directory and the first segment may have just been created: make their
        // names durable before any record in them is acknowledged.
        sync_dir(dir)?;
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
        let file = Arc::new(file);
        Ok(Spool {
            dir: dir.to_path_buf(),
            state: Arc::new(Mutex::new(Active {
                segment,
                file: file.clone(),
                len,
                unsynced: Vec::new(),
                dir_unsynced: false,
            })),
        })
    }

    /// Appends a record of `meta` and `payload`. Not durable until a [`Spool::sync`] that
    /// starts after this returns.
    pub fn append(&self, meta: &[u8], payload: &[u8]) -> Result<PayloadRef, SpoolError> {
        let body_len = 4 + meta.len() + payload.len();
        let too_large = || SpoolError::TooLarge(body_len);
        let len = u32::try_from(body_len).map_err(|_| too_large())?;
        let meta_len = u32::try_from(meta.len()).map_err(|_| too_large())?;
        let mut record = Vec::with_capacity(HEADER as usize + body_len);
        record.extend_from_slice(&len.to_le_bytes());
        record.extend_from_slice(&[0; 4]);
        record.extend_from_slice(&meta_len.to_le_bytes());
        record.extend_from_slice(meta);
        record.extend_from_slice(payload);
        let crc = crc32fast::hash(&record[HEADER as usize..]);
        record[4..8].copy_from_slice(&crc.to_le_bytes());

        let mut st = self.state.lock().expect("spool lock poisoned");
        if st.len > 0 && st.len + record.len() as u64 > SEGMENT_BYTES {
            let next = st.segment + 1;
            let path = segment_path(&self.dir, next);
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(io_err(&path))?;
            let closed = std::mem::replace(&mut st.file, Arc::new(file));
            if !st.unsynced.iter().any(|f| Arc::ptr_eq(f, &closed)) {
                st.unsynced.push(closed);
            }
            st.segment = next;
            st.len = 0;
            st.dir_unsynced = true;
        }
        let offset = st.len;
        if let Err(source) = st.file.write_all_at(&record, offset) {
            // Nothing after `offset` is referenced; the next append overwrites it.
            return Err(SpoolError::Io {
                path: segment_path(&self.dir, st.segment),
                source,
            });
        }
        st.len += record.len() as u64;
        let active = st.file.clone();
        if !st.unsynced.iter().any(|f| Arc::ptr_eq(f, &active)) {
            st.unsynced.push(active);
        }
        Ok(PayloadRef {
            segment: st.segment,
            offset,
            len,
        })
    }

    /// Where the next record will go: every record appended so far lies before it.
    pub fn position(&self) -> SpoolPos {
        let st = self.state.lock().expect("spool lock poisoned");
        SpoolPos {
            segment: st.segment,
            offset: st.len,
        }
    }

    /// Hands every valid record at or after `from` to `each`, in order. For recovery at open.
    pub fn scan_from(
        &self,
        from: SpoolPos,
        mut each: impl FnMut(PayloadRef, Record),
    ) -> Result<(), SpoolError> {
        for segment in segments(&self.dir)?.range(from.segment..) {
            let path = segment_path(&self.dir, *segment);
            let file = File::open(&path).map_err(io_err(&path))?;
            let start = if *segment == from.segment {
                from.offset
            } else {
                0
            };
            walk(&file, &path, start, |offset, body| {
                let at = PayloadRef {
                    segment: *segment,
                    offset,
                    len: body.len() as u32,
                };
                if let Some(record) = Record::decode(body) {
                    each(at, record);
                }
            })?;
        }
        Ok(())
    }

    /// The spool's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Makes every append that returned before this call durable. Blocking: call it from a
    /// blocking thread.
    pub fn sync(&self) -> Result<(), SpoolError> {
        let (files, dir_unsynced) = {
            let mut st = self.state.lock().expect("spool lock poisoned");
            (
                std::mem::take(&mut st.unsynced),
                std::mem::take(&mut st.dir_unsynced),
            )
        };
        // Put back what was not synced so the next round tries again.
        let retry = |files: &[Arc<File>], dir: bool| {
            let mut st = self.state.lock().expect("spool lock poisoned");
            st.unsynced.extend(files.iter().cloned());
            st.dir_unsynced |= dir;
        };
        for (i, f) in files.iter().enumerate() {
            if let Err(source) = f.sync_data() {
                retry(&files[i..], dir_unsynced);
                return Err(SpoolError::Io {
                    path: self.dir.clone(),
                    source,
                });
            }
        }
        if dir_unsynced && let Err(e) = sync_dir(&self.dir) {
            retry(&[], true);
            return Err(e);
        }
        Ok(())
    }

    /// Reads a record back, verifying its checksum. `Ok(None)` when its segment was deleted.
    pub fn read(&self, at: PayloadRef) -> Result<Option<Record>, SpoolError> {
        let path = segment_path(&self.dir, at.segment);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path)(e)),
        };
        let corrupt = || SpoolError::Corrupt {
            segment: at.segment,
            offset: at.offset,
        };
        let mut header = [0u8; HEADER as usize];
        file.read_exact_at(&mut header, at.offset)
            .map_err(|_| corrupt())?;
        let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes"));
        let crc = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        if len != at.len {
            return Err(corrupt());
        }
        let mut body = vec![0u8; len as usize];
        file.read_exact_at(&mut body, at.offset + HEADER)
            .map_err(|_| corrupt())?;
        if crc32fast::hash(&body) != crc {
            return Err(corrupt());
        }
        Record::decode(body).map(Some).ok_or_else(corrupt)
    }

    /// Deletes every segment before `keep_from` that is not in `referenced` (the active one
    /// is always kept). Returns how many were deleted.
    pub fn retain(&self, referenced: &BTreeSet<u64>, keep_from: u64) -> Result<usize, SpoolError> {
        let active = self.state.lock().expect("spool lock poisoned").segment;
        let mut n = 0;
        for seg in segments(&self.dir)? {
            if seg < active.min(keep_from) && !referenced.contains(&seg) {
                let path = segment_path(&self.dir, seg);
                std::fs::remove_file(&path).map_err(io_err(&path))?;
                n += 1;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_sync_read_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path()).unwrap();
        let a = spool.append(b"meta a", b"{\"a\":1}").unwrap();
        let b = spool.append(b"", b"").unwrap();
        let c = spool.append(b"m", &[0xff; 10_000]).unwrap();
        spool.sync().unwrap();
        let rec = |meta: &[u8], payload: &[u8]| Record {
            meta: meta.to_vec(),
            payload: payload.to_vec(),
        };
        assert_eq!(
            spool.read(a).unwrap().unwrap(),
            rec(b"meta a", b"{\"a\":1}")
        );
        assert_eq!(spool.read(b).unwrap().unwrap(), rec(b"", b""));
        assert_eq!(spool.read(c).unwrap().unwrap(), rec(b"m", &[0xff; 10_000]));

        let mut seen = Vec::new();
        spool
            .scan_from(
                SpoolPos {
                    segment: b.segment,
                    offset: b.offset,
                },
                |at, r| seen.push((at, r)),
            )
            .unwrap();
        assert_eq!(
            seen,
            vec![(b, rec(b"", b"")), (c, rec(b"m", &[0xff; 10_000]))]
        );
        let end = spool.position();
        assert!(
            end > SpoolPos {
                segment: c.segment,
                offset: c.offset
            }
        );
        let mut after_end = 0;
        spool.scan_from(end, |_, _| after_end += 1).unwrap();
        assert_eq!(after_end, 0);
    }

    #[test]
    fn a_torn_tail_is_cut_off_at_open_and_earlier_records_survive() {
        let dir = tempfile::tempdir().unwrap();
        let (a, torn) = {
            let spool = Spool::open(dir.path()).unwrap();
            let a = spool.append(b"", b"kept").unwrap();
            let torn = spool.append(b"", b"half written").unwrap();
            spool.sync().unwrap();
            (a, torn)
        };
        // A crash in the middle of the second append.
        let path = segment_path(dir.path(), torn.segment);
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(torn.offset + HEADER + 3).unwrap();
        drop(f);

        let spool = Spool::open(dir.path()).unwrap();
        assert_eq!(spool.read(a).unwrap().unwrap().payload, b"kept");
        assert!(matches!(spool.read(torn), Err(SpoolError::Corrupt { .. })));
        // The next append reuses the space. (The store drops references to torn records at
        // open, before any append, so none can outlive the cut.)
        let next = spool.append(b"", b"next one").unwrap();
        assert_eq!(next.offset, torn.offset);
        assert_eq!(spool.read(next).unwrap().unwrap().payload, b"next one");
    }

    #[test]
    fn flipped_bytes_read_as_corrupt_not_as_a_payload() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path()).unwrap();
        let a = spool.append(b"", b"payload bytes").unwrap();
        spool.sync().unwrap();
        let f = OpenOptions::new()
            .write(true)
            .open(segment_path(dir.path(), a.segment))
            .unwrap();
        f.write_all_at(b"X", a.offset + HEADER + 2).unwrap();
        assert!(matches!(spool.read(a), Err(SpoolError::Corrupt { .. })));
    }

    #[test]
    fn segments_roll_over_and_unreferenced_closed_ones_are_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path()).unwrap();
        let big = vec![7u8; (SEGMENT_BYTES / 2) as usize];
        let first = spool.append(b"", &big).unwrap();
        let second = spool.append(b"", &big).unwrap();
        let third = spool.append(b"", b"small").unwrap();
        assert_eq!(first.segment + 1, second.segment);
        assert_eq!(second.segment, third.segment);
        // The new segment's name is only durable once its directory is synced, in the same
        // round as its records.
        assert!(spool.state.lock().unwrap().dir_unsynced);
        spool.sync().unwrap();
        assert!(!spool.state.lock().unwrap().dir_unsynced);
        // Reopening continues in the newest segment.
        let spool = Spool::open(dir.path()).unwrap();
        assert_eq!(spool.append(b"", b"more").unwrap().segment, third.segment);
        let keep_all = u64::MAX;
        let referenced = BTreeSet::from([first.segment]);
        assert_eq!(spool.retain(&referenced, keep_all).unwrap(), 0);
        // Still needed by the replay: kept although nothing refers to it.
        assert_eq!(spool.retain(&BTreeSet::new(), first.segment).unwrap(), 0);
        assert_eq!(spool.retain(&BTreeSet::new(), keep_all).unwrap(), 1);
        assert_eq!(spool.read(first).unwrap(), None);
        assert_eq!(spool.read(third).unwrap().unwrap().payload, b"small");
    }
}
