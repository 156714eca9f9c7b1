//! Builds the gzip'd tar GitHub's codeload serves for `GET /repos/{o}/{r}/tarball/{ref}`: one
//! top-level directory `{owner}-{repo}-{shortsha}/` holding every file of the commit.
//!
//! Pure: takes the file map, returns bytes; never touches the disk.

use std::collections::BTreeMap;
use std::io::Write;

pub fn build(prefix: &str, files: &BTreeMap<String, Vec<u8>>) -> std::io::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut dir = tar::Header::new_gnu();
    dir.set_entry_type(tar::EntryType::Directory);
    dir.set_mode(0o775);
    dir.set_size(0);
    dir.set_mtime(0);
    tar.append_data(&mut dir, format!("{prefix}/"), std::io::empty())?;
    for (path, body) in files {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o664);
        h.set_size(body.len() as u64);
        h.set_mtime(0);
        tar.append_data(&mut h, format!("{prefix}/{path}"), body.as_slice())?;
    }
    let mut gz = tar.into_inner()?;
    gz.flush()?;
    gz.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn single_top_dir() {
        let mut files = BTreeMap::new();
        files.insert("src/lib.rs".to_string(), b"fn x() {}\n".to_vec());
        let bytes = build("o-r-abcdef0", &files).unwrap();
        let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
        let mut names = Vec::new();
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let mut s = String::new();
            e.read_to_string(&mut s).unwrap();
            names.push((name, s));
        }
        assert_eq!(names[0].0, "o-r-abcdef0/");
        assert_eq!(
            names[1],
            (
                "o-r-abcdef0/src/lib.rs".to_string(),
                "fn x() {}\n".to_string()
            )
        );
    }
}
