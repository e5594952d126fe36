//! The environment variables the binary reads for the library (docs/config.md)
//! keep working now that the library reads none: `SAVANT_STATE_URL` wins
//! over `[state] url` for the engine commands, `exec` and `serve`, and a
//! blank value means unset. (`SAVANT_PATH`: `cli.rs`, `lsp.rs`;
//! `SAVANT_STATE_FSYNC`: `durability.rs`; `LOG_LEVEL`: `mcp_*.rs`;
//! `token_env`: `tests/exec_mcp`.)

use crate::common::{Root, cmd, run_cmd};

const WORKFLOW: &str = "id: w\nsteps:\n  - id: a\n    call: prompt.say\n    input_template: { text: hi }\n";

/// A project whose `[state] url` has the scheme `ftp`.
fn project() -> Root {
    let p = Root::new("environment");
    p.write("workflows/w.yaml", WORKFLOW);
    p.write("savant-think.toml", "[state]\nurl = \"ftp://file/db\"\n");
    p
}

/// Runs `args` with `SAVANT_STATE_URL` set to `url` (or unset) and returns
/// the exit status and stdout + stderr.
fn with_url(p: &Root, args: &[&str], url: Option<&str>) -> (Option<i32>, String) {
    let mut c = cmd(&p.path, args);
    match url {
        Some(u) => c.env("SAVANT_STATE_URL", u),
        None => c.env_remove("SAVANT_STATE_URL"),
    };
    let r = run_cmd(c);
    (r.code, format!("{}{}", r.stdout, r.stderr))
}

#[test]
fn savant_state_url_wins_over_the_file_and_blank_is_unset() {
    let p = project();
    for args in [&["plan", "w"][..], &["state", "list"][..]] {
        let (code, out) = with_url(&p, args, Some("mysql://env/db"));
        assert_eq!(code, Some(1), "{args:?}: {out}");
        assert!(
            out.contains("STATE_URL_INVALID") && out.contains("mysql") && !out.contains("ftp"),
            "{args:?}: {out}"
        );
        for url in [None, Some(""), Some("  ")] {
            let (code, out) = with_url(&p, args, url);
            assert_eq!(code, Some(1), "{args:?} {url:?}: {out}");
            assert!(out.contains("STATE_URL_INVALID") && out.contains("ftp"), "{args:?} {url:?}: {out}");
        }
    }
}

#[test]
fn exec_and_serve_read_savant_state_url_too() {
    let p = project();
    let (code, out) = with_url(&p, &["exec", "w"], Some("mysql://env/db"));
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("STATE_URL_INVALID") && out.contains("mysql"), "{out}");
    let (code, out) = with_url(&p, &["serve"], Some("mysql://env/db"));
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("cannot start the engine") && out.contains("mysql"), "{out}");
}
