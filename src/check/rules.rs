//! The documentation of every diagnostic code, from `docs/checks.md` (built
//! into the binary): what `savant-think rule CODE` prints and what SARIF's
//! rule help carries. `tests/it/docs.rs` keeps that page true.

use crate::diagnostic::Code;

const CHECKS_MD: &str = include_str!("../../docs/checks.md");

/// The `## CODE (severity)` section of docs/checks.md, heading included,
/// without trailing blank lines.
pub fn doc(code: Code) -> &'static str {
    let heading = format!("\n## {} (", code.as_str());
    let Some(start) = CHECKS_MD.find(&heading) else { return "" };
    let section = &CHECKS_MD[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 4);
    section[..end].trim_end()
}

/// The section's first paragraph after *What it does*, as one line.
pub fn description(code: Code) -> String {
    let doc = doc(code);
    let body = doc.split_once("*What it does*:").map_or("", |(_, rest)| rest);
    let paragraph = body.split("\n\n").next().unwrap_or("");
    let joined = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.is_empty() { code.summary().to_owned() } else { joined }
}

/// The docs/checks.md anchor of a code's section (GitHub's slug of its heading).
pub fn anchor(code: Code) -> String {
    format!("{}-{}", code.as_str().to_lowercase(), code.severity().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_section() {
        for &code in Code::ALL {
            let d = doc(code);
            assert!(d.starts_with(&format!("## {} (", code.as_str())), "{code}: {d:.60}");
            assert!(!d.contains(&format!("\n## {}", "")), "{code}'s section runs into the next one");
            assert!(description(code).len() > 20, "{code}");
        }
    }
}
