//! The inspector in a real browser (issue 26): headless chromium over the
//! DevTools protocol loads the runs page, opens a run, checks the DAG's
//! nodes and statuses against `state get`, reads a step's panel, sees a
//! node change when the run advances (no reload), sees an action without
//! auth refused, and finds no console error. `<script>` planted in a result
//! and in a workflow's text stays text. Skips without chromium (`apt-get
//! install chromium`), except in CI or with SAVANT_REQUIRE_CHROMIUM=1.

use crate::common::Root;
use crate::inspect_http::serve;
use crate::inspect_term::review_run;
use crate::support::browser::{Browser, Page};
use crate::support::skip::skip;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);

fn browser(test: &str) -> Option<Browser> {
    let b = Browser::start();
    if b.is_none() {
        skip(test, "chromium is not installed (apt-get install chromium)", Some("SAVANT_REQUIRE_CHROMIUM"));
    }
    b
}

/// What the page shows of each node: `[[id, status], …]`.
fn nodes(b: &mut Browser, page: &Page) -> Value {
    b.eval(page, "Array.from(document.querySelectorAll('#dag g[data-step-id]')).map(g => [g.dataset.stepId, g.dataset.status])")
}

const PLANTED: &str =
    r#"{"title": "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">"}"#;

#[test]
fn a_run_page_shows_the_dag_live_in_a_real_browser() {
    let Some(mut b) = browser("inspect_browser::a_run_page_shows_the_dag_live_in_a_real_browser") else {
        return;
    };
    let root = review_run("browser-run");
    root.ok(&[
        "plan",
        "review",
        "--run-id",
        "planted",
        "--params",
        r#"{"mr": "<script>window.pwned = 3</script>"}"#,
    ]);
    root.ok(&["next", "review", "--run-id", "planted", "--step", "fetch", "--result", PLANTED]);
    let server = serve(&root, &["--token", "s3cret"]);
    let base = format!("http://{}", server.addr);

    // The runs page, from the address `ui` prints (the token becomes a cookie).
    let page = b.open(&format!("{base}/ui/?token=s3cret"));
    b.wait_for(&page, "document.body.dataset.ready === '1'", WAIT);
    assert_eq!(b.eval(&page, "location.pathname + location.search"), json!("/ui/"));
    let ids = b.eval(
        &page,
        "Array.from(document.querySelectorAll('#runs-table tbody tr')).map(r => r.dataset.runId).sort()",
    );
    assert_eq!(ids, json!(["planted", "r1"]));

    // Open r1: one node per step, each with the status state get gives.
    b.eval(&page, "document.querySelector('tr[data-run-id=r1] a.run-link').click()");
    b.wait_for(&page, "location.pathname === '/ui/runs/review/r1' && document.body.dataset.version", WAIT);
    let state = root.ok(&["state", "get", "review", "--run-id", "r1"]);
    let expected: Vec<Value> =
        state["steps"].as_array().unwrap().iter().map(|s| json!([s["id"], s["status"]])).collect();
    assert_eq!(nodes(&mut b, &page), Value::Array(expected));
    assert_eq!(b.eval(&page, "document.querySelectorAll('#dag path.edge').length"), json!(6));

    // Click a step: its panel.
    b.eval(&page, "window.marker = 42; document.querySelector('g[data-step-id=lint]').dispatchEvent(new MouseEvent('click', {bubbles: true}))");
    let why = b.wait_for(
        &page,
        "document.getElementById('panel-why') && document.getElementById('panel-why').textContent",
        WAIT,
    );
    assert_eq!(why, json!("ready: its dependencies are done; submit its result with next"));
    let instruction = b.eval(&page, "JSON.parse(document.getElementById('panel-instruction').textContent)");
    assert_eq!(instruction["call"], "tools.lint");

    // Advance the run from the command line: the node turns done, no reload.
    root.ok(&["next", "review", "--run-id", "r1", "--step", "lint", "--result", "{}"]);
    b.wait_for(&page, "document.querySelector('g[data-step-id=lint]').dataset.status === 'done'", WAIT);
    assert_eq!(b.eval(&page, "window.marker"), json!(42), "updated in place, not reloaded");
    assert_eq!(b.eval(&page, "document.getElementById('run-version').textContent"), json!("version 3"));
    b.wait_for(&page, "document.getElementById('panel-why').textContent === 'done'", WAIT);
    assert_eq!(b.errors(&page), Vec::<String>::new(), "no console errors");

    // An action without the CSRF token, or without the cookie, is refused.
    let status = b.eval(
        &page,
        "fetch('/ui/api/runs/review/r1/actions/reset', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'}).then(r => r.status)",
    );
    assert_eq!(status, json!(403));
    let status = b.eval(
        &page,
        "fetch('/ui/api/runs/review/r1/actions/reset', {method: 'POST', credentials: 'omit', headers: {'Content-Type': 'application/json'}, body: '{}'}).then(r => r.status)",
    );
    assert_eq!(status, json!(401));
    // The page's own way (session's CSRF token, its Origin) works, and the page follows.
    let status = b.eval(
        &page,
        "fetch('/ui/api/session').then(r => r.json()).then(s => fetch('/ui/api/runs/review/r1/actions/reset', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Savant-Csrf': s.csrf}, body: JSON.stringify({checkpoint: 'files', force: true})})).then(r => r.status)",
    );
    assert_eq!(status, json!(200));
    b.wait_for(&page, "document.querySelector('g[data-step-id=lint]').dataset.status === 'ready'", WAIT);

    // <script> in a result and in params is shown as text and never runs.
    b.goto(&page, &format!("{base}/ui/runs/review/planted#step=fetch"));
    let shown = b.wait_for(
        &page,
        "document.getElementById('panel-result') && document.getElementById('panel-result').textContent",
        WAIT,
    );
    assert!(shown.as_str().unwrap().contains("<script>window.pwned = 1</script><img src=x"), "{shown}");
    b.eval(
        &page,
        "Array.from(document.querySelectorAll('.tabs button')).find(t => t.dataset.tab === 'params').click()",
    );
    let params = b.wait_for(
        &page,
        "document.querySelector('main pre') && document.querySelector('main pre').textContent",
        WAIT,
    );
    assert!(params.as_str().unwrap().contains("<script>window.pwned = 3</script>"), "{params}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(b.eval(&page, "typeof window.pwned"), json!("undefined"));
    assert_eq!(b.eval(&page, "document.querySelectorAll('script').length"), json!(1));
    assert_eq!(b.eval(&page, "document.querySelectorAll('main img').length"), json!(0));
}

#[test]
fn bad_input_and_planted_markup_in_a_real_browser() {
    let Some(mut b) = browser("inspect_browser::bad_input_and_planted_markup_in_a_real_browser") else {
        return;
    };
    let root = review_run("browser-bad");
    // A step id (and a name) with markup: valid YAML and a valid workflow, shown as text everywhere.
    let id = "<script>window.pwned=5</script>";
    root.workflow(
        "evil",
        &format!("id: evil\nname: \"<img src=x onerror=window.pwned=4>\"\nsteps:\n  - id: \"{id}\"\n    call: prompt.say\n"),
    );
    root.ok(&["plan", "evil", "--run-id", "e1"]);
    let server = serve(&root, &[]);
    let base = format!("http://{}", server.addr);
    let page = b.open(&format!("{base}/ui/workflows/evil"));
    b.wait_for(&page, "document.body.dataset.ready === '1'", WAIT);
    let code = b.eval(&page, "document.querySelector('.code').textContent");
    assert!(code.as_str().unwrap().contains(&format!("id: \"{id}\"")), "{code}");
    assert_eq!(b.eval(&page, "document.querySelector('#dag g[data-step-id]').dataset.stepId"), json!(id));
    b.goto(&page, &format!("{base}/ui/runs/evil/e1#step=%3Cscript%3Ewindow.pwned%3D5%3C%2Fscript%3E"));
    let title = b.wait_for(
        &page,
        "document.getElementById('panel-title') && document.getElementById('panel-title').textContent",
        WAIT,
    );
    assert!(title.as_str().unwrap().contains(id), "{title}");
    let shown = b.eval(&page, "document.querySelector('#dag g[data-step-id] text').textContent");
    assert!(shown.as_str().unwrap().starts_with("● <script>window.pw"), "{shown}");
    assert_eq!(b.eval(&page, "typeof window.pwned"), json!("undefined"));
    assert_eq!(b.eval(&page, "document.querySelectorAll('script').length"), json!(1));
    assert_eq!(b.eval(&page, "document.querySelectorAll('main img').length"), json!(0));

    // An unknown run: a clear message and a link to the one meant.
    b.goto(&page, &format!("{base}/ui/runs/review/r2"));
    let text = b.wait_for(
        &page,
        "document.getElementById('error') && document.getElementById('error').textContent",
        WAIT,
    );
    assert!(text.as_str().unwrap().starts_with("UNKNOWN_RUN: no run `r2` of `review`"), "{text}");
    let link = b.eval(&page, "document.querySelector('#error a').getAttribute('href')");
    assert_eq!(link, json!("/ui/runs/review/r1"));
    // No token configured: the page says actions need one.
    b.goto(&page, &format!("{base}/ui/runs/review/r1"));
    let actions = b.wait_for(
        &page,
        "document.getElementById('actions') && document.getElementById('actions').textContent",
        WAIT,
    );
    assert!(actions.as_str().unwrap().starts_with("actions need a token"), "{actions}");
    let errors: Vec<String> = b.errors(&page).into_iter().filter(|e| !e.contains("status of 404")).collect();
    assert_eq!(errors, Vec::<String>::new());
}

/// A 1,000-step workflow: 40 layers of 25, each step reading the captures
/// of the one above it and of its neighbour there.
pub fn grid(id: &str) -> String {
    let mut y = format!("id: {id}\nsteps:\n");
    for i in 0..1000 {
        y.push_str(&format!("  - id: s{i}\n    call: ai.do\n    capture_as: c{i}\n"));
        if i >= 25 {
            let above = i - 25;
            let side = if i % 25 == 24 { above } else { above + 1 };
            y.push_str(&format!("    input_template: {{ a: \"<<c{above}.ok>>\", b: \"<<c{side}.ok>>\" }}\n"));
        }
    }
    y
}

#[test]
fn a_thousand_step_run_page_is_small_and_quick() {
    let Some(mut b) = browser("inspect_browser::a_thousand_step_run_page_is_small_and_quick") else { return };
    let root = Root::with_workflows("browser-1k", &[("grid", &grid("grid"))]);
    root.ok(&["plan", "grid", "--run-id", "big"]);
    let server = serve(&root, &[]);
    let page = b.open("about:blank");
    // Warm the server's caches (the first compile), then measure a load.
    b.goto(&page, &format!("http://{}/ui/runs/grid/big", server.addr));
    b.wait_for(&page, "document.body.dataset.version", Duration::from_secs(60));
    b.goto(&page, "about:blank");
    let started = Instant::now();
    b.goto(&page, &format!("http://{}/ui/runs/grid/big", server.addr));
    b.wait_for(&page, "document.body.dataset.version", Duration::from_secs(60));
    let interactive = started.elapsed();
    let svg_bytes = b.eval(&page, "document.getElementById('dag').outerHTML.length").as_u64().unwrap();
    assert_eq!(b.eval(&page, "document.querySelectorAll('#dag g[data-step-id]').length"), json!(1000));
    eprintln!("1,000-step run page: interactive in {interactive:?}, SVG {svg_bytes} bytes");
    assert!(svg_bytes < 1_000_000, "the SVG is {svg_bytes} bytes");
    // The time is a figure, not a test (a shared machine): docs/PERFORMANCE.md.
    assert_eq!(b.errors(&page), Vec::<String>::new());
}

/// The demo of docs/inspector.md: a run part-way through, with a refused
/// result, a foreach under way and a `when`.
const DEMO: &str = r#"id: review
name: Review a merge request
params:
  mr: { type: string }
steps:
  - id: fetch
    call: gitlab.get_mr
    input_template: { mr: "<<params.mr>>" }
    capture_as: mr_data
  - id: lint
    call: tools.lint
    deps: [fetch]
  - id: files
    call: gitlab.files
    input_template: { title: "<<mr_data.title>>" }
    success_schema: { type: array, items: { type: string } }
    capture_as: file_list
  - id: review_each
    call: ai.do
    foreach: file_list
    input_template: { file: "<<item>>" }
  - id: summarize
    call: prompt.say
    deps: [lint]
    when: "steps.review_each.status == 'done'"
    input_template: { message: "Reviewed <<mr_data.title>>" }
"#;

/// Takes the screenshots of docs/inspector.md; writes them to docs/images/
/// with SAVANT_BLESS_SCREENSHOTS=1 (docs/inspector-screenshots.sh).
#[test]
fn screenshots_of_the_docs() {
    let Some(mut b) = browser("inspect_browser::screenshots_of_the_docs") else { return };
    let root = Root::with_workflows("browser-shots", &[("review", DEMO)]);
    root.ok(&["plan", "review", "--run-id", "demo", "--params", r#"{"mr": "!7"}"#]);
    root.ok(&[
        "next",
        "review",
        "--run-id",
        "demo",
        "--step",
        "fetch",
        "--result",
        r#"{"title": "Fix the login redirect"}"#,
    ]);
    let mut refused = root.command(&[
        "next",
        "review",
        "--run-id",
        "demo",
        "--step",
        "files",
        "--result",
        r#"{"files": "a.rs"}"#,
    ]);
    assert_eq!(refused.output().unwrap().status.code(), Some(1));
    let files = r#"["src/login.rs", "src/session.rs", "tests/login.rs"]"#;
    root.ok(&["next", "review", "--run-id", "demo", "--step", "files", "--result", files]);
    root.ok(&[
        "next",
        "review",
        "--run-id",
        "demo",
        "--step",
        "review_each[0]",
        "--result",
        r#"{"ok": true}"#,
    ]);
    let server = serve(&root, &["--token", "demo"]);
    let base = format!("http://{}", server.addr);
    let page = b.open(&format!("{base}/ui/?token=demo"));
    let shots = [
        ("inspector-runs.png", "/ui/", "document.querySelector('#runs-table')"),
        ("inspector-run.png", "/ui/runs/review/demo#step=files", "document.getElementById('panel-events')"),
        (
            "inspector-timeline.png",
            "/ui/runs/review/demo#tab=timeline",
            "document.querySelector('.timeline .bar')",
        ),
        (
            "inspector-source.png",
            "/ui/runs/review/demo#tab=source",
            "document.querySelector('#source .code')",
        ),
    ];
    let bless = std::env::var("SAVANT_BLESS_SCREENSHOTS").is_ok_and(|v| v == "1");
    for (name, path, ready) in shots {
        b.goto(&page, "about:blank");
        b.goto(&page, &format!("{base}{path}"));
        b.wait_for(&page, &format!("document.body.dataset.ready === '1' && {ready}"), WAIT);
        let png = b.screenshot(&page);
        assert!(png.starts_with(b"\x89PNG"), "{name}");
        if bless {
            std::fs::write(std::path::Path::new(crate::common::CRATE).join("docs/images").join(name), png)
                .unwrap();
        }
    }
    assert_eq!(b.errors(&page), Vec::<String>::new());
}

/// A browser that dies under a test is reported at once as what it is —
/// chromium, its pid, the signal that killed it, the tail of its log — not
/// as a protocol call that got no answer.
#[test]
fn a_killed_browser_is_reported_as_killed() {
    let Some(mut b) = browser("inspect_browser::a_killed_browser_is_reported_as_killed") else {
        return;
    };
    b.call(None, "Browser.getVersion", json!({})).unwrap();
    let pid = b.pid();
    let killed = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let started = Instant::now();
    let err = b.call(None, "Browser.getVersion", json!({})).unwrap_err();
    assert!(err.contains(&format!("chromium (pid {pid}) died: killed by signal 9 (SIGKILL)")), "{err}");
    assert!(err.contains("the last lines of its log"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10), "reported after {:?}", started.elapsed());
}
