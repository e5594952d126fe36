//! What both web surfaces check before they answer: the MCP server at
//! `/mcp` (`mcp::http`) and the run inspector at `/ui/` (`inspect::guard`).
//! The `Host` and `Origin` values a server on this machine accepts, read
//! strictly; the bearer token, read from `Authorization` and compared in
//! constant time. A leaf: it knows neither surface, so neither imports the
//! other for it. Each surface keeps its own order of checks and its own
//! refusals (a JSON-RPC error, the inspector's JSON or a line of text).

use axum::http::{HeaderMap, header};
use std::net::Ipv6Addr;

/// Hosts always accepted in `Host` (any port).
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// Origins always accepted (any port).
pub const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// A `host[:port]` authority, strictly: a bracketed IPv6 literal or a name of
/// ASCII letters, digits, `-` and `.`, then an optional numeric port. No
/// user info, no empty parts. The host is lowercased.
pub fn parse_authority(s: &str) -> Option<(String, Option<u16>)> {
    let (host, rest) = if let Some(r) = s.strip_prefix('[') {
        let end = r.find(']')?;
        r[..end].parse::<Ipv6Addr>().ok()?;
        (r[..end].to_ascii_lowercase(), &r[end + 1..])
    } else {
        let end = s.find(':').unwrap_or(s.len());
        let h = &s[..end];
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
            return None;
        }
        (h.to_ascii_lowercase(), &s[end..])
    };
    let port = match rest {
        "" => None,
        r => {
            let p = r.strip_prefix(':')?;
            if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(p.parse::<u16>().ok()?)
        }
    };
    Some((host, port))
}

/// An `Origin` value, strictly: `null`, or `scheme://host[:port]` with no
/// path, user info or trailing garbage.
pub fn origin_is_well_formed(s: &str) -> bool {
    if s == "null" {
        return true;
    }
    let Some((scheme, rest)) = s.split_once("://") else { return false };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    scheme_ok && parse_authority(rest).is_some()
}

/// Why a request's `Host` could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostError {
    /// No `Host` header, or more than one.
    NotOne,
    /// One `Host` header that is not `host[:port]` ([`parse_authority`]).
    Malformed,
}

/// The one `Host` of a request, parsed.
pub fn host(headers: &HeaderMap) -> Result<(String, Option<u16>), HostError> {
    let mut all = headers.get_all(header::HOST).iter();
    let (Some(value), None) = (all.next(), all.next()) else { return Err(HostError::NotOne) };
    value.to_str().ok().and_then(parse_authority).ok_or(HostError::Malformed)
}

/// Whether `host` is one of `allowed` (a name and, if given, the only port it may carry).
pub fn host_allowed(allowed: &[(String, Option<u16>)], host: &(String, Option<u16>)) -> bool {
    allowed.iter().any(|(h, p)| *h == host.0 && p.is_none_or(|p| Some(p) == host.1))
}

/// The request's `Origin`: `Ok(None)` without one, `Ok(Some(_))` for one
/// well-formed value ([`origin_is_well_formed`]), `Err(())` for a repeated
/// or malformed one.
#[allow(clippy::result_unit_err)]
pub fn origin(headers: &HeaderMap) -> Result<Option<&str>, ()> {
    let mut all = headers.get_all(header::ORIGIN).iter();
    match (all.next(), all.next()) {
        (None, _) => Ok(None),
        (Some(o), None) => match o.to_str() {
            Ok(s) if origin_is_well_formed(s) => Ok(Some(s)),
            _ => Err(()),
        },
        _ => Err(()),
    }
}

/// The token of `Authorization: Bearer <token>` (or `bearer`), trimmed.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
}

/// Whether `given` is the secret `want`, compared without an early exit so
/// that timing does not leak the secret (a token, a CSRF token).
pub fn same_secret(given: &str, want: &str) -> bool {
    let (a, b) = (given.as_bytes(), want.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn authorities_parse_strictly() {
        assert_eq!(parse_authority("localhost:8080"), Some(("localhost".into(), Some(8080))));
        assert_eq!(parse_authority("LocalHost"), Some(("localhost".into(), None)));
        assert_eq!(parse_authority("[::1]:80"), Some(("::1".into(), Some(80))));
        for bad in [
            "evil.com@127.0.0.1",
            "localhost:evil",
            "localhost:",
            ":80",
            "[::1].evil.com",
            "::1",
            "a b",
            "x:99999",
            "[zz]",
            "",
        ] {
            assert_eq!(parse_authority(bad), None, "{bad}");
        }
        assert!(origin_is_well_formed("http://[::1]:3000"));
        assert!(origin_is_well_formed("null"));
        for bad in
            ["http://[::1].evil.com", "http://localhost:3000/", "http://u@localhost", "localhost", "://x"]
        {
            assert!(!origin_is_well_formed(bad), "{bad}");
        }
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }

    #[test]
    fn headers_are_read_strictly() {
        let mut h = HeaderMap::new();
        assert_eq!(host(&h), Err(HostError::NotOne));
        assert_eq!(origin(&h), Ok(None));
        assert_eq!(bearer(&h), None);
        h.insert(header::HOST, HeaderValue::from_static("LocalHost:7331"));
        h.insert(header::ORIGIN, HeaderValue::from_static("http://localhost:7331"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer  s3cret "));
        let parsed = host(&h).unwrap();
        assert_eq!(parsed, ("localhost".into(), Some(7331)));
        assert!(host_allowed(&[("localhost".into(), None)], &parsed));
        assert!(!host_allowed(&[("localhost".into(), Some(80))], &parsed));
        assert_eq!(origin(&h), Ok(Some("http://localhost:7331")));
        assert_eq!(bearer(&h), Some("s3cret"));
        h.append(header::HOST, HeaderValue::from_static("localhost"));
        h.append(header::ORIGIN, HeaderValue::from_static("http://localhost"));
        assert_eq!(host(&h), Err(HostError::NotOne));
        assert_eq!(origin(&h), Err(()));
        h.insert(header::HOST, HeaderValue::from_static("evil@localhost"));
        assert_eq!(host(&h), Err(HostError::Malformed));
    }
}
