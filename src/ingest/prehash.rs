//! A file on disk is hashed before its run begins, so an exact re-upload is answered
//! without parsing, and a file written to while it is read is refused whole.

use super::Input;
use std::io::Read;

/// A file on disk, opened once and hashed before its parse.
pub(super) struct PreHashed {
    pub(super) file: std::fs::File,
    pub(super) sha256: String,
    pub(super) bytes: u64,
    stamp: Stamp,
}

/// What tells that a file was written to: its inode, size, and modification and change
/// times (to the nanosecond where the file system keeps them). A rewrite of the same size
/// within one tick of the file system's clock could still pass: the parse is refused only
/// on what the file system shows.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode_ctime: (u64, i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            inode_ctime: (meta.ino(), meta.ctime(), meta.ctime_nsec()),
        }
    }
}

impl PreHashed {
    /// A regular file: opened once, hashed, rewound. Anything else (stdin, a pipe, a FIFO,
    /// a character device): spooled to an anonymous temporary file while hashed.
    pub(super) fn of_input(input: &Input) -> std::io::Result<Self> {
        match input {
            Input::Stdin => Self::spooled(std::io::stdin().lock()),
            Input::Path(path) | Input::Upload { path, .. } => {
                let file = std::fs::File::open(path)?;
                let meta = file.metadata()?;
                if meta.is_dir() {
                    Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "is a directory, not a file",
                    ))
                } else if meta.is_file() {
                    Self::of(file, &meta)
                } else {
                    Self::spooled(file)
                }
            }
        }
    }

    /// Hashes `file` to its end (1 MiB reads) and rewinds it for the parse.
    fn of(mut file: std::fs::File, meta: &std::fs::Metadata) -> std::io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        let (sha256, bytes) = hash_copy(&mut file, &mut std::io::sink())?;
        file.seek(SeekFrom::Start(0))?;
        Ok(PreHashed {
            file,
            sha256,
            bytes,
            stamp: Stamp::of(meta),
        })
    }

    /// Copies `source` into an anonymous temporary file (gone when closed), hashing it.
    fn spooled(mut source: impl Read) -> std::io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        let mut file = tempfile::tempfile()?;
        let (sha256, bytes) = {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut file);
            let r = hash_copy(&mut source, &mut w)?;
            std::io::Write::flush(&mut w)?;
            r
        };
        file.seek(SeekFrom::Start(0))?;
        let meta = file.metadata()?;
        Ok(PreHashed {
            file,
            sha256,
            bytes,
            stamp: Stamp::of(&meta),
        })
    }

    /// Whether the parse read what was hashed: as many bytes, and the file not written to
    /// since it was opened ([`Stamp`]); else why not.
    pub(super) fn unchanged(&self, bytes_parsed: u64) -> Result<(), String> {
        let now = self.file.metadata().map(|m| Stamp::of(&m)).ok();
        if bytes_parsed == self.bytes && now.as_ref() == Some(&self.stamp) {
            Ok(())
        } else {
            Err(format!(
                "the file changed while it was being read ({} bytes hashed, {bytes_parsed} parsed); nothing posted",
                self.bytes
            ))
        }
    }
}

/// Reads `source` to its end (1 MiB reads), writing it to `sink` and hashing it: (hex
/// SHA-256, bytes).
fn hash_copy(
    source: &mut impl Read,
    sink: &mut impl std::io::Write,
) -> std::io::Result<(String, u64)> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = match source.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        sink.write_all(&buf[..n])?;
        bytes += n as u64;
    }
    Ok((hex::encode(h.finalize()), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn a_file_is_hashed_once_and_read_again_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.ach");
        std::fs::write(&path, b"0123456789").unwrap();
        let mut p = PreHashed::of_input(&Input::Path(path.clone())).unwrap();
        assert_eq!(p.sha256, hex::encode(Sha256::digest(b"0123456789")));
        assert_eq!(p.bytes, 10);
        let mut again = Vec::new();
        p.file.read_to_end(&mut again).unwrap();
        assert_eq!(again, b"0123456789", "rewound for the parse");
        assert!(p.unchanged(10).is_ok());
        // Fewer or more bytes parsed than hashed: refused.
        let e = p.unchanged(12).unwrap_err();
        assert_eq!(
            e,
            "the file changed while it was being read (10 bytes hashed, 12 parsed); nothing posted"
        );
    }

    #[test]
    fn a_file_written_to_after_its_hash_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.ach");
        std::fs::write(&path, b"first").unwrap();
        let p = PreHashed::of_input(&Input::Path(path.clone())).unwrap();
        // Same length, other bytes, a later modification time.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        assert!(p.unchanged(5).is_err());
    }
}
