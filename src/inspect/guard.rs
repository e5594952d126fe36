//! The inspector's guard (what every request to `/ui` meets first) and
//! the state its handlers share. The rules are `/mcp`'s (see `mcp::http`);
//! reading `Host`, `Origin` and the token is `crate::web_guard`'s.

use crate::runtime::Engine;
use crate::web_guard::{self, same_secret};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// How the inspector is served.
#[derive(Clone, Debug, Default)]
pub struct UiOptions {
    /// The bearer token every request needs; without one, the inspector
    /// is read-only (no actions without auth).
    pub token: Option<String>,
    /// Show runs, offer no action.
    pub read_only: bool,
    /// Allowed `Host`s: a name and, if given, the only port it may carry.
    pub hosts: Vec<(String, Option<u16>)>,
    /// Allowed `Origin`s (`scheme://host:*` matches any port).
    pub origins: Vec<String>,
}

/// What every handler shares.
pub(crate) struct Ui {
    pub(crate) engine: Arc<Engine>,
    pub(crate) options: UiOptions,
    /// The CSRF token actions need with the cookie (derived from the token).
    pub(crate) csrf: Option<String>,
}

/// How a request proved who it is (set by the guard for the handlers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Auth {
    /// No token is configured: anyone who passed the Host checks.
    Open,
    /// `Authorization: Bearer` (a script; a browser cannot forge it).
    Bearer,
    /// The `savant_ui_PORT` cookie (a browser: actions need the CSRF token too).
    Cookie,
}

/// The cookie the page's first load sets from `?token=`: `savant_ui_PORT`
/// (cookies ignore ports, so two servers on one host keep one each).
fn cookie_name(port: Option<u16>) -> String {
    format!("savant_ui_{}", port.unwrap_or(80))
}

/// Every response's security headers.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A 303 to `to`.
pub(crate) fn redirect(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// A refusal: JSON under `/ui/api`, a line of text elsewhere.
pub(crate) fn refuse(status: StatusCode, code: &str, message: &str, api: bool) -> Response {
    tracing::warn!(%status, code, message, "refused an inspector request");
    if api {
        // As every inspector error: `message` beside the engine's shape.
        let body = serde_json::json!({"error": code, "details": {"message": message}, "message": message});
        (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
    } else {
        (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{message}\n"))
            .into_response()
    }
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|v| {
        v.split(';').find_map(|kv| {
            let (k, val) = kv.trim().split_once('=')?;
            (k == name).then(|| val.to_owned())
        })
    })
}

fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| percent_decode(v))
    })
}

/// `%XX` and `+` decoded (invalid escapes kept as they are).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 3 <= bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `origin` is one of `allowed` (`…:*` matches any port).
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    allowed.iter().any(|a| match a.strip_suffix(":*") {
        Some(base) => {
            origin == base
                || origin
                    .strip_prefix(base)
                    .and_then(|p| p.strip_prefix(':'))
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        }
        None => origin == a.trim_end_matches('/'),
    })
}

pub(crate) async fn guard(state: State<Arc<Ui>>, req: Request, next: Next) -> Response {
    // Every answer carries them: refusals and redirects too, not only pages.
    let mut response = admit(state, req, next).await;
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// The checks of [`guard`]: a refusal, the token's redirect, or the route's answer.
async fn admit(State(ui): State<Arc<Ui>>, mut req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/ui/api/");
    let host = match addressed(&ui, &req, api) {
        Ok(host) => host,
        Err(r) => return *r,
    };
    let auth = match authenticate(&ui, &req, api, host.1) {
        Ok(auth) => auth,
        Err(r) => return *r,
    };
    req.extensions_mut().insert(auth);
    req.extensions_mut().insert(Host(match host.1 {
        Some(p) if host.0.contains(':') => format!("[{}]:{p}", host.0),
        Some(p) => format!("{}:{p}", host.0),
        None if host.0.contains(':') => format!("[{}]", host.0),
        None => host.0.clone(),
    }));
    next.run(req).await
}

/// The request's target, `Host` and `Origin` checked: a path, one allowed
/// host (returned, with its port), no origin or an allowed one. `Err` is
/// the refusal.
fn addressed(ui: &Ui, req: &Request, api: bool) -> Result<(String, Option<u16>), Box<Response>> {
    let no = |status, code, message: &str| Box::new(refuse(status, code, message, api));
    if req.uri().scheme().is_some() || req.uri().authority().is_some() {
        return Err(no(
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            "Bad Request: send the path, not an absolute URL",
        ));
    }
    let Ok(host) = web_guard::host(req.headers()) else {
        return Err(no(
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            "Bad Request: send exactly one Host header (host[:port])",
        ));
    };
    if !web_guard::host_allowed(&ui.options.hosts, &host) {
        return Err(no(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Forbidden: the Host header is not allowed (loopback names only; `serve --http` adds --allowed-host)",
        ));
    }
    let Ok(origin) = web_guard::origin(req.headers()) else {
        return Err(no(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Forbidden: the Origin header is malformed or repeated",
        ));
    };
    if let Some(o) = origin
        && !origin_allowed(o, &ui.options.origins)
    {
        return Err(no(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Forbidden: the Origin is not allowed (--allowed-origin)",
        ));
    }
    Ok(host)
}

/// How the request is authenticated when `--token` is set: a bearer
/// header, the cookie, or (a page GET) the `?token=` of the printed URL,
/// answered with a redirect that keeps it in the cookie. `Err` is that
/// redirect or the refusal.
fn authenticate(ui: &Ui, req: &Request, api: bool, port: Option<u16>) -> Result<Auth, Box<Response>> {
    let Some(want) = ui.options.token.as_deref() else { return Ok(Auth::Open) };
    let bearer = web_guard::bearer(req.headers());
    let from_query = query_param(req.uri().query(), "token");
    if bearer.is_some_and(|g| same_secret(g, want)) {
        Ok(Auth::Bearer)
    } else if req.method() == Method::GET
        && !api
        && from_query.as_deref().is_some_and(|g| same_secret(g, want))
    {
        // The URL `ui` printed: keep the token in a cookie, drop it from the address bar.
        let mut r = redirect(req.uri().path());
        let value = format!("{}={want}; Path=/ui; HttpOnly; SameSite=Strict", cookie_name(port));
        if let Ok(v) = HeaderValue::from_str(&value) {
            r.headers_mut().insert(header::SET_COOKIE, v);
        }
        Err(Box::new(r))
    } else if cookie(req.headers(), &cookie_name(port)).is_some_and(|g| same_secret(&g, want)) {
        Ok(Auth::Cookie)
    } else {
        let mut r = refuse(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "Unauthorized: open the address `savant-think ui` printed (it carries ?token=…), or send \
             Authorization: Bearer <token> (--token / SAVANT_THINK_TOKEN)",
            api,
        );
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        Err(Box::new(r))
    }
}

/// The request's `Host`, as `host[:port]` (for the same-origin check of actions).
#[derive(Clone, Debug)]
pub(crate) struct Host(pub(crate) String);

/// Whether a POST may act: auth, not read-only, and for a browser the
/// CSRF token and its own Origin. `Err` is the refusal.
pub(crate) fn may_act(ui: &Ui, auth: Auth, host: &Host, headers: &HeaderMap) -> Result<(), Box<Response>> {
    let no = |status, code, message: &str| Err(Box::new(refuse(status, code, message, true)));
    if ui.options.read_only {
        return no(
            StatusCode::FORBIDDEN,
            "READ_ONLY",
            "this inspector is read-only (--read-only): no actions",
        );
    }
    match auth {
        Auth::Open => no(
            StatusCode::FORBIDDEN,
            "UNAUTHORIZED",
            "actions need auth: serve with --token (or SAVANT_THINK_TOKEN); `savant-think ui` makes one",
        ),
        Auth::Bearer => Ok(()),
        Auth::Cookie => {
            let given = headers.get("x-savant-csrf").and_then(|v| v.to_str().ok());
            let csrf_ok = match (given, ui.csrf.as_deref()) {
                (Some(g), Some(want)) => same_secret(g, want),
                _ => false,
            };
            if !csrf_ok {
                return no(
                    StatusCode::FORBIDDEN,
                    "CSRF",
                    "missing or wrong X-Savant-Csrf (read it from /ui/api/session)",
                );
            }
            let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
            let same_origin = origin
                .and_then(|o| o.split_once("://"))
                .is_some_and(|(scheme, authority)| matches!(scheme, "http" | "https") && authority == host.0);
            if !same_origin {
                return no(
                    StatusCode::FORBIDDEN,
                    "CSRF",
                    "an action must come from the inspector's own page (Origin)",
                );
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_match_their_port_wildcards() {
        let allowed = vec!["http://127.0.0.1:*".to_owned(), "https://app.example.com".to_owned()];
        assert!(origin_allowed("http://127.0.0.1:8080", &allowed));
        assert!(origin_allowed("http://127.0.0.1", &allowed));
        assert!(origin_allowed("https://app.example.com", &allowed));
        assert!(!origin_allowed("http://127.0.0.1.evil.com", &allowed));
        assert!(!origin_allowed("http://127.0.0.1:80x", &allowed));
        assert!(!origin_allowed("https://app.example.com:444", &allowed));
    }

    #[test]
    fn query_values_are_decoded() {
        assert_eq!(percent_decode("a%20b+c%2F%zz"), "a b c/%zz");
        assert_eq!(query_param(Some("x=1&token=s%3Dt"), "token").as_deref(), Some("s=t"));
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; savant_ui_7340=tok; savant_ui_80=other"));
        assert_eq!(cookie(&h, &cookie_name(Some(7340))).as_deref(), Some("tok"));
    }
}
