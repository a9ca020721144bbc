//! SHA-256 of a file as it is read, off the parsing thread once the file is large.
//!
//! The parsers (src/formats) do not hash: the ingest hashes each file once, either before
//! parsing (a file on disk: the exact re-upload fast path needs the digest first, and the
//! parse then reads the same open file again without hashing) or while parsing
//! ([`HashingReader`] under the parser: stdin, dry runs). Hashing costs about as much as
//! parsing a NACHA file, so past [`INLINE_MAX`] bytes the chunks go, copied, through a
//! bounded channel to a thread of their own: parse and hash run on two cores.

use sha2::{Digest, Sha256};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Bytes hashed on the caller's thread before a hashing thread is started: small files
/// (every test, most real files) never pay for one.
pub(crate) const INLINE_MAX: u64 = 1 << 20;
/// Chunks queued for the hashing thread: bounds the memory held to this many chunks.
const QUEUED_MAX: usize = 8;
/// Bytes gathered before a chunk is handed over: small updates (an XML reader consumes a
/// few bytes at a time) are batched, so the channel carries a few hundred chunks a GB.
const CHUNK: usize = 1 << 20;

/// The hashing thread: where chunks go, where it sends them back once hashed (for reuse:
/// a fresh megabyte costs its page faults, more than the copy), and the digest it returns
/// when they stop.
type Worker = (SyncSender<Vec<u8>>, Receiver<Vec<u8>>, JoinHandle<[u8; 32]>);

/// Hashes what it is fed, in order.
pub(crate) struct StreamHasher {
    inline: Option<Sha256>,
    fed: u64,
    /// A hashing thread could not be started: hash inline to the end.
    no_thread: bool,
    worker: Option<Worker>,
    /// Bytes not yet handed to the worker.
    pending: Vec<u8>,
}

impl Default for StreamHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamHasher {
    pub(crate) fn new() -> Self {
        StreamHasher {
            inline: Some(Sha256::new()),
            fed: 0,
            no_thread: false,
            worker: None,
            pending: Vec::new(),
        }
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.fed += bytes.len() as u64;
        if self.worker.is_none() && !self.no_thread && self.fed > INLINE_MAX {
            self.start_worker();
        }
        match (&self.worker, &mut self.inline) {
            (Some(_), _) => {
                // Handed over before it would outgrow its capacity (never reallocated).
                for part in bytes.chunks(CHUNK) {
                    if self.pending.len() + part.len() > self.pending.capacity() {
                        self.hand_over();
                    }
                    self.pending.extend_from_slice(part);
                }
                if self.pending.len() >= CHUNK {
                    self.hand_over();
                }
            }
            (None, Some(h)) => h.update(bytes),
            (None, None) => unreachable!("a hasher without state"),
        }
    }

    fn hand_over(&mut self) {
        if let Some((tx, back, _)) = &self.worker
            && !self.pending.is_empty()
        {
            let next = match back.try_recv() {
                Ok(mut spare) => {
                    spare.clear();
                    spare
                }
                Err(_) => Vec::with_capacity(CHUNK),
            };
            let chunk = std::mem::replace(&mut self.pending, next);
            tx.send(chunk)
                .expect("the hashing thread ends only when its sender is dropped");
        }
    }

    fn start_worker(&mut self) {
        let mut h = self.inline.clone().expect("hashed inline so far");
        let (tx, rx) = sync_channel::<Vec<u8>>(QUEUED_MAX);
        let (back_tx, back) = sync_channel::<Vec<u8>>(QUEUED_MAX + 2);
        let spawned = std::thread::Builder::new()
            .name("sha256".into())
            .spawn(move || {
                for chunk in rx {
                    h.update(&chunk);
                    // Back for reuse, unless enough are waiting there.
                    let _ = back_tx.try_send(chunk);
                }
                h.finalize().into()
            });
        match spawned {
            Ok(handle) => {
                self.inline = None;
                self.worker = Some((tx, back, handle));
                self.pending = Vec::with_capacity(CHUNK);
            }
            // No thread to be had: go on hashing inline, from where the hasher stood.
            Err(e) => {
                tracing::debug!(error = %e, "no hashing thread; hashing inline");
                self.no_thread = true;
            }
        }
    }

    /// The digest of everything fed so far; the hasher starts over.
    pub(crate) fn finish(&mut self) -> [u8; 32] {
        self.hand_over();
        let out = match self.worker.take() {
            Some((tx, _, handle)) => {
                drop(tx);
                handle.join().expect("the hashing thread does not panic")
            }
            None => self.inline.take().unwrap_or_default().finalize().into(),
        };
        *self = StreamHasher::new();
        out
    }
}

/// Hashes and counts every byte read through it (or none: [`HashingReader::counting`]).
pub(crate) struct HashingReader<R> {
    inner: R,
    hasher: Option<StreamHasher>,
    bytes: u64,
}

impl<R: std::io::Read> HashingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Some(StreamHasher::new()),
            bytes: 0,
        }
    }
    /// Counts without hashing (the bytes were hashed before).
    pub(crate) fn counting(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: None,
            bytes: 0,
        }
    }
    /// Reads what is left to the end (hashed and counted): a parser that stopped early
    /// still leaves the digest and size of the whole input.
    pub(crate) fn drain(&mut self) -> std::io::Result<()> {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match std::io::Read::read(self, &mut buf) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    /// The digest (if hashing) and the bytes read.
    pub(crate) fn finish(mut self) -> (Option<[u8; 32]>, u64) {
        (self.hasher.as_mut().map(StreamHasher::finish), self.bytes)
    }
}

impl<R: std::io::Read> std::io::Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
        }
        self.bytes += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashing_reader_covers_every_byte_and_a_drained_rest() {
        use std::io::Read;
        let data: Vec<u8> = b"not a nacha file at all\n"
            .iter()
            .copied()
            .cycle()
            .take(9 << 20)
            .collect();
        let mut r = HashingReader::new(&data[..]);
        let mut head = [0u8; 1000];
        r.read_exact(&mut head).unwrap();
        r.drain().unwrap();
        let (sha, n) = r.finish();
        assert_eq!(n, data.len() as u64);
        assert_eq!(
            sha.map(hex::encode),
            Some(hex::encode(Sha256::digest(&data)))
        );
        let mut c = HashingReader::counting(&data[..100]);
        c.drain().unwrap();
        assert_eq!(c.finish(), (None, 100));
    }

    #[test]
    fn inline_and_threaded_give_the_file_hash() {
        let data: Vec<u8> = (0..(INLINE_MAX as usize * 3 + 12_345))
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        let want: [u8; 32] = Sha256::digest(&data).into();
        for chunk in [1_000, 65_536, 1 << 20] {
            let mut h = StreamHasher::new();
            for c in data.chunks(chunk) {
                h.update(c);
            }
            assert!(h.worker.is_some(), "past INLINE_MAX the thread hashes");
            assert_eq!(h.finish(), want, "chunk {chunk}");
        }
        let mut h = StreamHasher::new();
        for c in data.chunks(7) {
            h.update(c);
        }
        assert_eq!(h.finish(), want, "tiny updates are batched");
        let mut h = StreamHasher::new();
        h.update(b"abc");
        assert!(h.worker.is_none());
        assert_eq!(
            hex::encode(h.finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut r = HashingReader::new(&data[..]);
        r.drain().unwrap();
        assert_eq!(r.finish(), (Some(want), data.len() as u64));
    }
}
