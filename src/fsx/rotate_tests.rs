use super::*;

fn scratch(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("savant-rotate-{name}-{}-{nanos}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn a_file_is_rotated_before_it_passes_its_cap_and_only_keep_copies_stay() {
    let dir = scratch("keep");
    let log = dir.join("session.log");
    let rotation = Rotation { max_bytes: 10, keep: 2 };
    let mut f = RotatingFile::open(&log, rotation).unwrap();
    for line in ["aaaa\n", "bbbb\n", "cccc\n", "dddd\n", "eeee\n", "ffff\n", "gggg\n"] {
        f.append(line.as_bytes()).unwrap();
        assert!(fs::metadata(&log).unwrap().len() <= 10);
    }
    assert_eq!(read(&log), "gggg\n");
    assert_eq!(read(&dir.join("session.log.1")), "eeee\nffff\n");
    assert_eq!(read(&dir.join("session.log.2")), "cccc\ndddd\n");
    assert!(!dir.join("session.log.3").exists(), "only `keep` copies");
    // One write larger than the cap goes in whole, into a fresh file.
    append_rotating(&log, rotation, b"0123456789abcdef\n").unwrap();
    assert_eq!(read(&log), "0123456789abcdef\n");
    assert_eq!(read(&dir.join("session.log.1")), "gggg\n");
    // keep = 0: the full file is dropped.
    append_rotating(&log, Rotation { max_bytes: 10, keep: 0 }, b"z\n").unwrap();
    assert_eq!(read(&log), "z\n");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_writer_follows_a_rotation_by_another_and_never_a_symlink() {
    let dir = scratch("other");
    let log = dir.join("a.log");
    let rotation = Rotation { max_bytes: 8, keep: 1 };
    let mut one = RotatingFile::open(&log, rotation).unwrap();
    let mut two = RotatingFile::open(&log, rotation).unwrap();
    one.append(b"111\n").unwrap();
    two.append(b"222\n").unwrap();
    one.append(b"333\n").unwrap(); // rotates: a.log.1 = 111 222
    two.append(b"444\n").unwrap(); // writes the new a.log, not a.log.1
    assert_eq!((read(&log), read(&dir.join("a.log.1"))), ("333\n444\n".into(), "111\n222\n".into()));

    #[cfg(unix)]
    {
        let target = dir.join("target");
        fs::write(&target, "KEEP").unwrap();
        let link = dir.join("link.log");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(append_rotating(&link, rotation, b"x\n").is_err());
        assert_eq!(read(&target), "KEEP");
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn rotate_if_full_rotates_only_a_full_file() {
    let dir = scratch("full");
    let log = dir.join("server.log");
    let rotation = Rotation { max_bytes: 4, keep: 1 };
    rotate_if_full(&log, rotation).unwrap();
    fs::write(&log, "abc").unwrap();
    rotate_if_full(&log, rotation).unwrap();
    assert_eq!(read(&log), "abc");
    fs::write(&log, "abcd").unwrap();
    rotate_if_full(&log, rotation).unwrap();
    assert!(!log.exists());
    assert_eq!(read(&dir.join("server.log.1")), "abcd");
    let _ = fs::remove_dir_all(&dir);
}
