//! The accept loop: HTTP/1.1 connections served by hyper, with what `axum::serve` cannot
//! be told.
//!
//! - A client gets `--header-timeout` to send its request's header fields; one that
//!   trickles them (slowloris) has its connection closed, not held open for ever.
//! - The errors hyper answers by itself, before any route sees the request (`400` for a
//!   malformed request line, header or `Content-Length`, `414`, `431`), come with an empty
//!   body; [`ProblemIo`] rewrites them as `application/problem+json` like every other
//!   error, so that a client has one shape of error to read.
//! - On shutdown the listener stops accepting and the connections finish the requests
//!   they are serving.

use super::problem::Problem;
use axum::Router;
use axum::http::StatusCode;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;

/// Serves `router` on `listener` until `shutdown` resolves, then waits for the connections'
/// requests in flight.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before it was
                    // accepted: the listener itself is fine.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(TokioIo::new(ProblemIo::new(stream)), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// A connection whose writes are looked at for the bodiless error answers hyper writes
/// on its own (see the module's comment), which are replaced by problem+json.
///
/// It does not say it takes vectored writes (`is_write_vectored` is false), so hyper
/// flattens each answer's head into one buffer: a head is seen whole in one `poll_write`.
pub(crate) struct ProblemIo<S> {
    inner: S,
    /// A replacement answer not yet written whole.
    pending: Vec<u8>,
    written: usize,
}

impl<S> ProblemIo<S> {
    pub(crate) fn new(inner: S) -> Self {
        ProblemIo {
            inner,
            pending: Vec::new(),
            written: 0,
        }
    }
}

impl<S: AsyncWrite + Unpin> ProblemIo<S> {
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ProblemIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ProblemIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some(answer) = problem_for(buf) {
            // The whole of hyper's answer is taken; ours goes out now or at the flush.
            self.pending = answer;
            if let Poll::Ready(Err(e)) = self.poll_pending(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The problem+json answer that replaces `head` when it is one of hyper's own error answers:
/// a whole head of status 400, 414 or 431 with `content-length: 0` and no content type (every
/// error a route answers has a body and its type).
fn problem_for(head: &[u8]) -> Option<Vec<u8>> {
    if !head.starts_with(b"HTTP/1.1 4") || !head.ends_with(b"\r\n\r\n") || head.len() < 12 {
        return None;
    }
    let lower = head.to_ascii_lowercase();
    let has = |needle: &[u8]| lower.windows(needle.len()).any(|w| w == needle);
    if !has(b"\r\ncontent-length: 0\r\n") || has(b"\r\ncontent-type:") {
        return None;
    }
    let (status, code, title, detail) = match &head[9..12] {
        b"400" => (
            StatusCode::BAD_REQUEST,
            "malformed_request",
            "The request is not well-formed HTTP/1.1",
            "the request line, a header field or the Content-Length could not be read \
             (RFC 9112); the connection is closed",
        ),
        b"414" => (
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            "The request target is too long",
            "the request target is longer than the server reads; the connection is closed",
        ),
        b"431" => (
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "header_fields_too_large",
            "The request's header fields are too large",
            "the header fields are larger, or more, than the server reads (about 400 KiB, \
             100 fields); the connection is closed",
        ),
        _ => return None,
    };
    let body = Problem::new(status, code, title, detail).body();
    let date = std::str::from_utf8(head)
        .ok()?
        .split("\r\n")
        .find(|l| l.to_ascii_lowercase().starts_with("date:"))
        .map(|l| format!("{l}\r\n"))
        .unwrap_or_default();
    let mut out = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n{date}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        super::problem::PROBLEM_JSON,
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{ProblemIo, problem_for};
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A socket that is busy every other call and takes at most 5 bytes at a time.
    #[derive(Default)]
    struct Slow {
        out: Vec<u8>,
        busy: bool,
    }

    impl tokio::io::AsyncWrite for Slow {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            self.busy = !self.busy;
            if self.busy {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let n = buf.len().min(5);
            self.out.extend_from_slice(&buf[..n]);
            Poll::Ready(Ok(n))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Through a socket that is busy and takes little at a time, hyper's answer is replaced
    /// whole and the next answer follows it, byte for byte.
    #[test]
    fn the_replacement_goes_out_whole_through_a_slow_socket() {
        use tokio::io::AsyncWriteExt;
        let hyper = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n";
        let next = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let out = rt.block_on(async {
            let mut io = ProblemIo::new(Slow::default());
            io.write_all(hyper).await.unwrap();
            io.write_all(next).await.unwrap();
            io.flush().await.unwrap();
            io.shutdown().await.unwrap();
            io.inner.out
        });
        let mut want = problem_for(hyper).unwrap();
        want.extend_from_slice(next);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want)
        );
    }

    #[test]
    fn only_hypers_own_bodiless_errors_are_rewritten() {
        let hyper = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\
                      date: Sun, 06 Dec 2026 04:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(problem_for(hyper).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(head.contains("\r\ncontent-type: application/problem+json\r\n"));
        assert!(head.contains("\r\ndate: Sun, 06 Dec 2026 04:00:00 GMT"));
        assert!(head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["code"], "header_fields_too_large");
        assert_eq!(v["status"], 431);
        // A route's own answers pass as they are.
        let routed = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\n\
                       content-length: 0\r\n\r\n";
        assert_eq!(problem_for(routed), None);
        assert_eq!(
            problem_for(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
        assert_eq!(
            problem_for(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"),
            None
        );
    }
}
