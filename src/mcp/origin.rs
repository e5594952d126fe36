//! Which `Host` and `Origin` values a server on this machine accepts, read
//! strictly: shared by `/mcp` (`http.rs`) and the inspector at `/ui/`.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
