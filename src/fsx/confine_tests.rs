//! [`confine`] against a table of hostile paths.

use super::*;
use std::os::unix::fs::symlink;

struct Tree(PathBuf);

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `<tmp>/outside.txt`, `<tmp>/outdir/`, and the root `<tmp>/root` with
/// files, a subdirectory and links of every kind.
fn tree() -> (Tree, PathBuf) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "savant-confine-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(dir.join("outdir")).unwrap();
    std::fs::write(dir.join("outside.txt"), "secret").unwrap();
    std::fs::write(dir.join("outdir/x.yaml"), "secret").unwrap();
    std::fs::write(root.join("in.yaml"), "ok").unwrap();
    std::fs::write(root.join("sub/deep.yaml"), "ok").unwrap();
    symlink(dir.join("outside.txt"), root.join("out-link")).unwrap();
    symlink(root.join("in.yaml"), root.join("in-link")).unwrap();
    symlink(root.join("out-link"), root.join("chain-out")).unwrap();
    symlink(root.join("in-link"), root.join("chain-in")).unwrap();
    symlink(dir.join("gone"), root.join("dangling-out")).unwrap();
    symlink(root.join("gone"), root.join("dangling-in")).unwrap();
    symlink(dir.join("outdir"), root.join("dir-out")).unwrap();
    symlink(root.join("sub"), root.join("dir-in")).unwrap();
    (Tree(dir), root)
}

#[test]
fn hostile_paths_are_refused_with_a_stable_code() {
    let (_t, root) = tree();
    let outside_abs = root.parent().unwrap().join("outside.txt");
    let long = "a/".repeat(3000);
    let cases: Vec<(&str, Result<&str, &str>)> = vec![
        ("in.yaml", Ok("in.yaml")),
        ("./sub/../in.yaml", Ok("in.yaml")),
        ("sub/deep.yaml", Ok("sub/deep.yaml")),
        ("in-link", Ok("in.yaml")),
        ("chain-in", Ok("in.yaml")),
        ("dir-in/deep.yaml", Ok("sub/deep.yaml")),
        ("../outside.txt", Err("OUTSIDE_ROOT")),
        ("sub/../../outside.txt", Err("OUTSIDE_ROOT")),
        ("/etc/passwd", Err("OUTSIDE_ROOT")),
        (outside_abs.to_str().unwrap(), Err("OUTSIDE_ROOT")),
        ("out-link", Err("SYMLINK_OUTSIDE_ROOT")),
        ("chain-out", Err("SYMLINK_OUTSIDE_ROOT")),
        ("dir-out/x.yaml", Err("SYMLINK_OUTSIDE_ROOT")),
        ("dangling-out", Err("SYMLINK_OUTSIDE_ROOT")),
        ("dangling-in", Err("NOT_FOUND")),
        ("missing.yaml", Err("NOT_FOUND")),
        ("in\0.yaml", Err("INVALID_PATH")),
        ("", Err("INVALID_PATH")),
        (long.as_str(), Err("INVALID_PATH")),
    ];
    let real_root = canonical(&root).unwrap();
    for (given, want) in cases {
        let got = confine(&root, Path::new(given));
        match (want, &got) {
            (Ok(rel), Ok(p)) => assert_eq!(p, &real_root.join(rel), "{given:?}"),
            (Err(code), Err(e)) => {
                assert_eq!(e.code(), code, "{given:?}: {e}");
                let message = e.to_string();
                if e.is_outside() {
                    assert!(message.contains(&real_root.display().to_string()), "names the root: {message}");
                }
                if code != "INVALID_PATH" {
                    assert!(message.contains(given), "names the path: {message}");
                }
            }
            _ => panic!("{given:?}: wanted {want:?}, got {got:?}"),
        }
    }
    // An absolute path inside the root is fine; a relative one is taken from
    // the root, not from the working directory.
    assert!(confine(&root, &root.join("in.yaml")).is_ok());
    assert_eq!(confine(&root, Path::new("Cargo.toml")).unwrap_err().code(), "NOT_FOUND");
}

#[test]
fn a_file_must_be_a_regular_file() {
    let (_t, root) = tree();
    assert_eq!(confine_file(&root, Path::new("sub")).unwrap_err().code(), "NOT_A_FILE");
    assert_eq!(confine_file(&root, Path::new("dir-in")).unwrap_err().code(), "NOT_A_FILE");
    let fifo = root.join("pipe.yaml");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    assert_eq!(confine_file(&root, Path::new("pipe.yaml")).unwrap_err().code(), "NOT_A_FILE");
    assert!(confine_file(&root, Path::new("in-link")).is_ok());
    assert!(same_file(&root.join("in-link"), &root.join("chain-in")));
    assert!(!same_file(&root.join("in.yaml"), &root.join("sub/deep.yaml")));
}
