//! Any bytes as a file to migrate from the original dialects: never panics;
//! a migrated text is YAML the crate reads back without a syntax error, and
//! checking it does not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use savant_think::migrate::{Outcome, migrate};
use savant_think::source::SourceFile;
use savant_think::{Code, Limits, check_str};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let migration = migrate(&SourceFile::new("fuzz.yaml", text.as_ref()), &Limits::default());
    if let Outcome::Migrated { text: out, .. } = &migration.outcome {
        let checked = check_str("fuzz.yaml", out);
        let broken = checked.diagnostics.iter().find(|d| d.code == Code::YamlSyntax);
        assert!(broken.is_none(), "migrated text is not YAML: {broken:?}\n---\n{out}");
    }
});
