//! `/console/sign-in` and `/console/sign-out`: an API key in, a session cookie out.

use super::page;
use super::session::{self, Jar, Operator, after_sign_in, csrf_matches};
use crate::serve::Shared;
use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use futures_util::FutureExt;

/// How long the sign-in form's cookie lasts: a form left open longer is refused (and
/// shown again, fresh).
const SIGN_IN_FORM_SECONDS: i64 = 3600;

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignIn {
    chrome: Option<page::Chrome>,
    csrf: String,
    next: String,
    error: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct Next {
    next: Option<String>,
}

/// The form, with a fresh double-submit cookie (or the one the browser has).
fn form(headers: &HeaderMap, next: String, error: Option<String>, status: StatusCode) -> Response {
    let secret = Jar::SignIn
        .read(headers)
        .filter(|s| s.len() == 43)
        .or_else(|| session::new_token().ok());
    let Some(secret) = secret else {
        return page::refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "No random source",
            "the operating system's random source failed; try again",
        );
    };
    let mut r = page::render_status(
        status,
        &SignIn {
            chrome: None,
            csrf: session::csrf_of(&secret),
            next,
            error,
        },
    );
    let c = Jar::SignIn.set(&secret, SIGN_IN_FORM_SECONDS, headers);
    r.headers_mut().append(header::SET_COOKIE, c);
    r
}

pub(crate) async fn show(headers: HeaderMap, Query(q): Query<Next>) -> Response {
    form(
        &headers,
        after_sign_in(q.next.as_deref()),
        None,
        StatusCode::OK,
    )
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct SignInForm {
    csrf: Option<String>,
    api_key: Option<String>,
    next: Option<String>,
}

pub(crate) async fn submit(
    State(app): State<Shared>,
    headers: HeaderMap,
    Form(f): Form<SignInForm>,
) -> Response {
    let next = after_sign_in(f.next.as_deref());
    let secret = Jar::SignIn.read(&headers).unwrap_or_default();
    if secret.is_empty() || !csrf_matches(&secret, f.csrf.as_deref()) {
        let why = "The sign-in form had expired or came from another page; sign in again.";
        return form(&headers, next, Some(why.into()), StatusCode::FORBIDDEN);
    }
    let presented = f.api_key.unwrap_or_default().trim().to_string();
    let (Ok(token), now) = (session::new_token(), chrono::Utc::now()) else {
        return page::refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "No random source",
            "the operating system's random source failed; try again",
        );
    };
    let lasts = app.config.console_session;
    // At most 30 days (`serve --console-session`): the sum fits.
    let until = now + chrono::Duration::from_std(lasts).unwrap_or(chrono::Duration::hours(8));
    let t = token.clone();
    let res = app
        .pool
        .run(move |l| {
            async move {
                let Some(key) = l.authenticate(&presented).await? else {
                    return Ok(false);
                };
                l.create_session(&t, &key, now, until).await?;
                Ok(true)
            }
            .boxed()
        })
        .await;
    match res {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => {
            let why = "That API key is unknown or revoked.";
            return form(&headers, next, Some(why.into()), StatusCode::UNAUTHORIZED);
        }
        Ok(Err(e)) | Err(e) => return page::ledger_failed(&e),
    }
    let max_age = i64::try_from(lasts.as_secs()).unwrap_or(i64::MAX);
    let mut r = Redirect::to(&next).into_response();
    let h = r.headers_mut();
    h.append(
        header::SET_COOKIE,
        Jar::Session.set(&token, max_age, &headers),
    );
    h.append(header::SET_COOKIE, Jar::SignIn.set("", 0, &headers));
    r
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct CsrfOnly {
    csrf: Option<String>,
}

/// Ends the session (its row deleted) and clears the cookie.
pub(crate) async fn sign_out(
    State(app): State<Shared>,
    op: Operator,
    headers: HeaderMap,
    Form(f): Form<CsrfOnly>,
) -> Response {
    if let Some(r) = op.csrf_refusal(f.csrf.as_deref()) {
        return r;
    }
    let token = op.token().to_string();
    let res = app
        .pool
        .run(move |l| async move { l.end_session(&token).await }.boxed())
        .await;
    if let Ok(Err(e)) | Err(e) = res {
        return page::ledger_failed(&e);
    }
    let mut r = Redirect::to("/console/sign-in").into_response();
    r.headers_mut()
        .append(header::SET_COOKIE, Jar::Session.set("", 0, &headers));
    r
}
