//! Issue 47.4: the schema as an explicit step (`savant-think state
//! migrate`) and replicas that run with DML grants only (docs/deploy.md,
//! Migrations and grants), on the shared throwaway cluster (skipped with a
//! note when PostgreSQL is not installed, unless `SAVANT_REQUIRE_PG=1`).

use crate::common::Root;
use savant_think::state::pg::{SCHEMA_VERSION, cluster};
use std::process::Command;

fn migrate(url: &str, root: &std::path::Path, json: bool) -> (bool, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_savant-think"));
    c.args(["state", "migrate", "--url", url, "--root"]).arg(root).env_remove("SAVANT_STATE_URL");
    if json {
        c.args(["--format", "json"]);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `serve --http` until it prints its address or exits; its stderr.
fn serve_fails(root: &std::path::Path, url: &str) -> String {
    let mut command = crate::support::Server::command(root);
    command.env("SAVANT_STATE_URL", url).stderr(std::process::Stdio::piped());
    let out = command.output().unwrap();
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn state_migrate_then_serve_with_dml_grants_only() {
    let Some(cluster) = cluster::for_test("operating_roles::state_migrate_then_serve_with_dml_grants_only")
    else {
        return;
    };
    let schema = "it_roles";
    let url = cluster.fresh_schema(schema).unwrap();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "DO $$ BEGIN CREATE ROLE it_roles_app LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
             GRANT USAGE ON SCHEMA {schema} TO it_roles_app;"
        ))
        .unwrap();
    let app = url.replacen("postgres://postgres@", "postgres://it_roles_app@", 1);
    let root = Root::new("dml-role");
    std::fs::create_dir_all(root.path.join("workflows")).unwrap();
    std::fs::write(
        root.path.join("workflows/hello.yaml"),
        "id: hello\nsteps:\n  - id: greet\n    call: prompt.say\n    input_template: { text: hi }\n",
    )
    .unwrap();

    // Unmigrated: the DML-only replica refuses to start, saying what to do.
    let refused = serve_fails(&root.path, &app);
    assert!(refused.contains("STATE_SCHEMA_OLDER"), "{refused}");
    assert!(refused.contains("has no savant-think schema"), "{refused}");
    assert!(refused.contains("savant-think state migrate"), "{refused}");

    let (ok, out, err) = migrate(&url, &root.path, false);
    assert!(ok, "{err}");
    let all: Vec<String> = (1..=SCHEMA_VERSION).map(|v| v.to_string()).collect();
    assert!(
        out.contains(&format!(
            "migrated from schema version 0 to {SCHEMA_VERSION} (applied {})",
            all.join(", ")
        )),
        "{out}"
    );
    assert!(out.starts_with("postgres://postgres@127.0.0.1:"), "the database is named: {out}");
    let (ok, out, err) = migrate(&url, &root.path, true);
    assert!(ok, "{err}");
    let again: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(again["from"], SCHEMA_VERSION);
    assert_eq!(again["to"], SCHEMA_VERSION);
    assert_eq!(again["applied"], serde_json::json!([]), "idempotent: {out}");

    // The grants of docs/deploy.md, as written there.
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/deploy.md")).unwrap();
    let grants = docs.split("```sql\n").nth(1).and_then(|s| s.split("```").next()).expect("a sql block");
    let grants =
        grants.replace("savant_app", "it_roles_app").replace("SCHEMA savant", &format!("SCHEMA {schema}"));
    let grants: String = grants
        .lines()
        .filter(|l| !l.starts_with("CREATE ROLE") && !l.starts_with("SET search_path"))
        .collect::<Vec<_>>()
        .join("\n");
    admin.batch_execute(&format!("SET search_path = {schema};\n{grants}")).unwrap();

    // Driven by the DML-only role: a run is planned (its workflow pinned
    // in savant_objects), advanced (savant_events) and deleted (archived).
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_savant-think"))
            .args(args)
            .arg("--root")
            .arg(&root.path)
            .env("SAVANT_STATE_URL", &app)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{args:?}: {text}{}", String::from_utf8_lossy(&out.stderr));
        text
    };
    assert!(cli(&["plan", "hello", "--run-id", "r1"]).contains("\"greet\""));
    cli(&["next", "hello", "--run-id", "r1", "--step", "greet", "--result", "{\"said\": \"hi\"}"]);
    cli(&["state", "delete", "hello", "--run-id", "r1"]);
    let archived: i64 = admin.query_one("SELECT count(*) FROM savant_archive", &[]).unwrap().get(0);
    assert_eq!(archived, 1);

    // Served by the DML-only role.
    let mut command = crate::support::Server::command(&root.path);
    command.env("SAVANT_STATE_URL", &app);
    let server = crate::support::Server::start(command, true);
    let ready = crate::inspect_http::request(&server.addr, "GET", "/readyz", &[], "");
    assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"));
    drop(server);
    let created: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tableowner = 'it_roles_app'",
            &[&schema],
        )
        .unwrap()
        .get(0);
    assert_eq!(created, 0);

    // A wrong URL for migrate is its code, message and hint, exit 1.
    let (ok, _, err) = migrate("mysql://x@h/db", &root.path, false);
    assert!(!ok && err.contains("STATE_URL_INVALID") && err.contains("hint:"), "{err}");
}
