//! Who is at the console: a session begun by signing in with an API key, carried by a
//! cookie, checked at every request; and the CSRF token every form carries.
//!
//! - The session cookie holds 32 random bytes; the ledger keeps only their SHA-256
//!   (`console_sessions`), with the API key and tenant signed in with and an expiry
//!   (`serve --console-session`, 8 h). The cookie is `HttpOnly` (no script reads it),
//!   `SameSite=Strict` (no other site's page sends it), `Path=/console`, `Secure` when the
//!   request came over TLS (a TLS proxy in front says so with `X-Forwarded-Proto: https`
//!   or `Forwarded: proto=https`; `serve` itself speaks plain HTTP), and expires with the
//!   session. A session is read again from the ledger at every request, joined with its
//!   key: a signed-out session or a revoked key is refused at once.
//! - The CSRF token is an HMAC-SHA256 of the fixed text [`CSRF_CONTEXT`] keyed with the
//!   session token: only a page that could read the session (the console's own) can
//!   write it into a form, and nothing more is stored. The sign-in form, which comes
//!   before any session, is keyed the same way with a random value in a cookie of its own
//!   (a double-submit token), so that no other site can sign a browser in.
//! - Without a session, a page (GET) sends the browser to the sign-in page, remembering
//!   where it was going; a form (POST) is refused with 401.

use super::page;
use crate::serve::Shared;
use crate::serve::store::ApiKey;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use cookie::{Cookie, SameSite};
use futures_util::FutureExt;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// A cookie of the console. Over TLS it is a `__Host-` cookie (`Secure`, `Path=/`, no
/// `Domain`): no other host — a sibling subdomain, a plain-HTTP page — can set one the
/// browser would send here. Over plain HTTP (loopback) its path is the console's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jar {
    /// The session.
    Session,
    /// The sign-in form's double-submit value.
    SignIn,
}

impl Jar {
    pub(crate) fn name(self, secure: bool) -> &'static str {
        match (self, secure) {
            (Jar::Session, false) => "clearledger_session",
            (Jar::Session, true) => "__Host-clearledger_session",
            (Jar::SignIn, false) => "clearledger_sign_in",
            (Jar::SignIn, true) => "__Host-clearledger_sign_in",
        }
    }

    fn path(self, secure: bool) -> &'static str {
        match (self, secure) {
            (_, true) => "/",
            (Jar::Session, false) => "/console",
            (Jar::SignIn, false) => "/console/sign-in",
        }
    }

    /// The `Set-Cookie` of `value` for a request with `headers`: HttpOnly, SameSite=Strict,
    /// lasting `max_age` seconds (0: delete it now).
    pub(crate) fn set(self, value: &str, max_age: i64, headers: &HeaderMap) -> HeaderValue {
        let secure = over_tls(headers);
        set_cookie(self.name(secure), value, self.path(secure), max_age, secure)
    }

    /// Its value in the request; `None` when absent, or sent twice (one of them planted).
    pub(crate) fn read(self, headers: &HeaderMap) -> Option<String> {
        cookie_value(headers, self.name(over_tls(headers)))
    }
}

/// What a CSRF token is an HMAC of.
pub(crate) const CSRF_CONTEXT: &[u8] = b"clearledger console form v1";

/// 32 bytes from the operating system's random source, URL-safe base64.
pub(crate) fn new_token() -> Result<String, getrandom::Error> {
    use base64::Engine;
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw))
}

/// The CSRF token of forms served under `secret` (a session token, or the sign-in cookie).
pub(crate) fn csrf_of(secret: &str) -> String {
    use base64::Engine;
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        unreachable!("HMAC takes a key of any length")
    };
    mac.update(CSRF_CONTEXT);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// Whether `presented` is the CSRF token of `secret` (compared in constant time).
pub(crate) fn csrf_matches(secret: &str, presented: Option<&str>) -> bool {
    presented.is_some_and(|p| crate::serve::store::same_digest(&csrf_of(secret), p))
}

/// Whether the browser reached us over TLS, as a proxy in front says (`serve` itself
/// speaks plain HTTP): then cookies are `Secure`.
pub(crate) fn over_tls(headers: &HeaderMap) -> bool {
    let says_https = |name: header::HeaderName, f: fn(&str) -> bool| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(f)
    };
    says_https(header::HeaderName::from_static("x-forwarded-proto"), |v| {
        v.split(',')
            .next()
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
    }) || says_https(header::FORWARDED, |v| {
        v.split([';', ','])
            .any(|p| p.trim().eq_ignore_ascii_case("proto=https"))
    })
}

/// A `Set-Cookie` value: `name=value` for `path`, HttpOnly, SameSite=Strict, `Secure` when
/// `secure`, lasting `max_age` seconds (0: delete it now).
fn set_cookie(
    name: &'static str,
    value: &str,
    path: &'static str,
    max_age: i64,
    secure: bool,
) -> HeaderValue {
    let c = Cookie::build((name, value))
        .path(path)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .max_age(cookie::time::Duration::seconds(max_age))
        .build();
    HeaderValue::from_str(&c.to_string()).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The value of cookie `name` in the request's `Cookie` headers; `None` when it is sent
/// twice (a second one planted by another path or host: neither is trusted).
fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut found = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| Cookie::split_parse(v.to_string()))
        .filter_map(Result::ok)
        .filter(|c| c.name() == name)
        .map(|c| c.value().to_string());
    let first = found.next();
    if found.next().is_some() {
        return None;
    }
    first
}

/// A signed-in operator: the API key the session was begun with (its tenant is the only
/// one the console shows) and the session's token.
pub(crate) struct Operator {
    pub(crate) key: ApiKey,
    token: String,
}

impl Operator {
    /// The CSRF token this session's forms carry.
    pub(crate) fn csrf(&self) -> String {
        csrf_of(&self.token)
    }

    /// `None` when a form's `presented` token is this session's; otherwise the 403 page.
    pub(crate) fn csrf_refusal(&self, presented: Option<&str>) -> Option<Response> {
        if csrf_matches(&self.token, presented) {
            return None;
        }
        Some(page::refused(
            StatusCode::FORBIDDEN,
            "The form was refused",
            "it came without this session's CSRF token (a form from another page, or from a \
             session that has ended). Nothing was done; open the page again and resubmit.",
        ))
    }

    /// The session's token (signing out ends it).
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// The tenant signed in.
    pub(crate) fn tenant(&self) -> &str {
        &self.key.tenant
    }
}

impl FromRequestParts<Shared> for Operator {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Shared) -> Result<Self, Response> {
        let token = Jar::Session.read(&parts.headers);
        let key = match token.clone() {
            None => None,
            Some(t) => {
                let now = chrono::Utc::now();
                match app
                    .readers
                    .run(move |l| async move { l.session_key(&t, now).await }.boxed())
                    .await
                {
                    Ok(Ok(k)) => k,
                    Ok(Err(e)) | Err(e) => return Err(page::ledger_failed(&e)),
                }
            }
        };
        match (key, token) {
            (Some(key), Some(token)) => Ok(Operator { key, token }),
            _ if parts.method == Method::GET || parts.method == Method::HEAD => {
                let next = parts
                    .uri
                    .path_and_query()
                    .map_or("/console/", |p| p.as_str());
                let to = format!(
                    "/console/sign-in?next={}",
                    percent_encoding::utf8_percent_encode(next, percent_encoding::NON_ALPHANUMERIC)
                );
                Err(Redirect::to(&to).into_response())
            }
            _ => Err(page::refused(
                StatusCode::UNAUTHORIZED,
                "Not signed in",
                "this session has ended (signed out, expired, or its API key revoked). \
                 Nothing was done; sign in again and resubmit.",
            )),
        }
    }
}

/// Where to go after signing in: `next` when it is a console path, else the overview (a
/// sign-in link cannot send the browser to another site).
pub(crate) fn after_sign_in(next: Option<&str>) -> String {
    match next {
        Some(n)
            if n.starts_with("/console/")
                && !n.starts_with("/console/sign-in")
                && n.bytes().all(|b| b.is_ascii_graphic() && b != b'\\') =>
        {
            n.to_string()
        }
        _ => "/console/".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csrf_token_is_the_sessions_and_no_other() {
        let (a, b) = ("session-a", "session-b");
        assert!(csrf_matches(a, Some(&csrf_of(a))));
        assert!(!csrf_matches(a, Some(&csrf_of(b))));
        assert!(!csrf_matches(a, None));
        assert!(!csrf_matches(a, Some("")));
        let t = csrf_of(a);
        assert!(!csrf_matches(a, Some(&t[..t.len() - 1])));
        assert_eq!(t.len(), 43);
    }

    #[test]
    fn after_sign_in_stays_in_the_console() {
        assert_eq!(after_sign_in(Some("/console/runs/7")), "/console/runs/7");
        assert_eq!(after_sign_in(Some("//evil.example/")), "/console/");
        assert_eq!(after_sign_in(Some("https://evil.example/")), "/console/");
        assert_eq!(after_sign_in(Some("/console/sign-in")), "/console/");
        assert_eq!(after_sign_in(Some("/console/\\evil")), "/console/");
        assert_eq!(after_sign_in(Some("/console/\u{1}")), "/console/");
        assert_eq!(after_sign_in(Some("/console/a b")), "/console/");
        assert_eq!(after_sign_in(None), "/console/");
    }

    #[test]
    fn tls_is_what_the_proxy_says() {
        let mut h = HeaderMap::new();
        assert!(!over_tls(&h));
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(over_tls(&h));
        let mut h = HeaderMap::new();
        h.insert(
            "forwarded",
            HeaderValue::from_static("for=1.2.3.4;proto=https"),
        );
        assert!(over_tls(&h));
        h.insert("forwarded", HeaderValue::from_static("proto=http"));
        assert!(!over_tls(&h));
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_a_host_cookie_over_tls() {
        let mut tls = HeaderMap::new();
        tls.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        let c = Jar::Session.set("tok", 60, &tls);
        let s = c.to_str().unwrap();
        for part in [
            "__Host-clearledger_session=tok",
            "HttpOnly",
            "SameSite=Strict",
            "Secure",
            "Path=/;",
            "Max-Age=60",
        ] {
            assert!(s.contains(part), "{s} lacks {part}");
        }
        assert!(!s.contains("Domain"), "{s}");
        let plain = Jar::Session.set("tok", 60, &HeaderMap::new());
        let p = plain.to_str().unwrap();
        assert!(
            p.starts_with("clearledger_session=tok") && !p.contains("Secure"),
            "{p}"
        );
        assert!(p.contains("Path=/console"), "{p}");
    }

    #[test]
    fn a_cookie_sent_twice_is_not_trusted() {
        let mut h = HeaderMap::new();
        h.insert(
            "cookie",
            HeaderValue::from_static("clearledger_session=a; x=1"),
        );
        assert_eq!(Jar::Session.read(&h).as_deref(), Some("a"));
        h.insert(
            "cookie",
            HeaderValue::from_static("clearledger_session=a; clearledger_session=b"),
        );
        assert_eq!(Jar::Session.read(&h), None);
        // Over TLS only the host cookie counts.
        let mut t = HeaderMap::new();
        t.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        t.insert(
            "cookie",
            HeaderValue::from_static("clearledger_session=planted"),
        );
        assert_eq!(Jar::Session.read(&t), None);
    }
}
