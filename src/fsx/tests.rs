//! Tests of the safe opens (unix: symlinks and FIFOs).

use super::*;

#[test]
fn symlinks_fifos_and_escapes_are_refused() {
    let dir = std::env::temp_dir().join(format!("savant-fsx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("root")).unwrap();
    let root = dir.join("root");
    std::fs::write(dir.join("outside"), "secret").unwrap();
    std::os::unix::fs::symlink(dir.join("outside"), root.join("link")).unwrap();
    std::fs::write(root.join("inside"), "ok").unwrap();
    std::os::unix::fs::symlink(root.join("inside"), root.join("good")).unwrap();
    assert!(open_nofollow(&root.join("link"), OpenOptions::new().read(true).append(true)).is_err());
    assert_eq!(std::fs::read_to_string(dir.join("outside")).unwrap(), "secret");
    assert!(confine(&root, &root.join("link")).is_err());
    assert!(confine(&root, &root.join("good")).is_ok());
    let fifo = root.join("pipe.yaml");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let e = open_regular(&fifo).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    assert!(read_capped(&root.join("inside"), 1).is_err());
    assert_eq!(read_capped(&root.join("inside"), 2).unwrap(), b"ok");
    let _ = std::fs::remove_dir_all(&dir);
}
