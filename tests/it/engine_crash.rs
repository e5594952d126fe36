//! The engine as separate processes: the real `savant-think` binary on a
//! temporary root, killed in the middle of `next` many times, and run eight
//! at a time against one run.
//!
//! - Crash safety: after every kill the run loads (`state get`), sits at a
//!   version boundary (the version before the call or the one after it, with
//!   the result in place exactly when the version moved), and the run goes on
//!   to `done` with every result.
//! - Concurrency: eight processes submitting the eight items of a foreach
//!   lose no update; every reply is a success or a defined error, and every
//!   exit status is 0 or 1.

use crate::support::generate::{self, Rng, items};
use crate::support::{Root, root::reply};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// Kills that land while the process is still running (the test goes on
/// until it has this many).
const KILLS: usize = 36;

/// A temporary project root with a `foreach` workflow `crashy` (then a
/// step `after`); every command in it fsyncs.
fn root(name: &str) -> Root {
    Root::with_workflows(name, &[("crashy", &generate::foreach_then_say("crashy"))])
        .env("SAVANT_STATE_FSYNC", "1")
}

fn state(root: &Root, run: &str) -> Value {
    root.ok(&["state", "get", "crashy", "--run-id", run])
}

fn state_dir(root: &Root) -> PathBuf {
    root.join(".savant/state")
}

fn result_of(step: &str) -> Value {
    json!({ "answer": step })
}

/// The status and result of `each[j]` in a state.
fn item(state: &Value, j: usize) -> (&str, &Value) {
    let it = &state["steps"][0]["items"][j];
    (it["status"].as_str().unwrap(), &it["result"])
}

fn item_index(step: &str) -> usize {
    step.strip_prefix("each[").and_then(|s| s.strip_suffix(']')).unwrap().parse().unwrap()
}

#[test]
fn killing_next_leaves_the_run_at_a_version_boundary() {
    let root = root("kill");
    // One item per round at most, so the run cannot end before the round cap.
    const MAX_ROUNDS: usize = 400;
    let n = MAX_ROUNDS + 5;
    let params = items(n).to_string();
    root.ok(&["plan", "crashy", "--run-id", "r", "--params", &params]);
    let mut rng = Rng::seeded();
    eprintln!("rng seed {}", rng.0);

    // How long one `next` takes, to spread the kills over its whole life.
    let mut lifetimes = Vec::new();
    for _ in 0..5 {
        let r = root.ok(&["plan", "crashy", "--run-id", "r", "--no-fresh"]);
        let step = r["instruction"]["step_id"].as_str().unwrap().to_owned();
        let started = Instant::now();
        root.ok(&[
            "next",
            "crashy",
            "--run-id",
            "r",
            "--step",
            &step,
            "--result",
            &result_of(&step).to_string(),
        ]);
        lifetimes.push(started.elapsed());
    }
    lifetimes.sort_unstable();
    let mut life = lifetimes[2].as_micros() as u64;
    eprintln!("one `next` takes {life} µs (median)");

    let (mut kills, mut kept_old, mut reached_new, mut finished_first) = (0, 0, 0, 0);
    let mut rounds = 0;
    while kills < KILLS {
        rounds += 1;
        assert!(rounds < MAX_ROUNDS, "only {kills} kills landed in {rounds} rounds");
        let r = root.ok(&["plan", "crashy", "--run-id", "r", "--no-fresh"]);
        assert_eq!(r["done"], false, "the run ended before enough kills: {r}");
        let before = r["state"]["version"].as_u64().unwrap();
        let step = r["instruction"]["step_id"].as_str().unwrap().to_owned();
        let result = result_of(&step).to_string();

        let mut child =
            root.spawn(&["next", "crashy", "--run-id", "r", "--step", &step, "--result", &result]);
        // Early kills mostly hit the process start; aim at its second half.
        std::thread::sleep(Duration::from_micros(life / 3 + rng.below(life)));
        let killed = child.try_wait().unwrap().is_none();
        if killed {
            child.kill().unwrap();
            kills += 1;
        } else {
            // Under load the calibration can be off: aim earlier next time.
            finished_first += 1;
            life = (life * 4 / 5).max(200);
        }
        let out = child.wait_with_output().unwrap();
        if !killed {
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
        }

        // The state loads, and is either the old version or the new one.
        let state = state(&root, "r");
        let after = state["version"].as_u64().unwrap();
        let (status, stored) = item(&state, item_index(&step));
        if after == before {
            assert!(killed, "a `next` that finished did not move the version");
            assert_eq!((status, stored), ("ready", &Value::Null), "round {rounds}: {state}");
            kept_old += 1;
        } else {
            assert_eq!(after, before + 1, "round {rounds}: version {before} → {after}");
            assert_eq!((status, stored), ("done", &result_of(&step)), "round {rounds}");
            reached_new += usize::from(killed);
        }
        // History and version agree: one event per version.
        assert_eq!(state["history"].as_array().unwrap().len() as u64, after);
        assert!(!state_dir(&root).join("crashy__r.json.tmp").exists() || killed);
    }
    eprintln!(
        "{rounds} rounds: {kills} kills mid-`next` ({kept_old} left the old version, {reached_new} the new one), \
         {finished_first} calls finished before the kill"
    );

    // The run goes on to done, with every result in place.
    let mut r = root.ok(&["plan", "crashy", "--run-id", "r", "--no-fresh"]);
    while r["done"] != true {
        let step = r["instruction"]["step_id"].as_str().unwrap().to_owned();
        r = root.ok(&[
            "next",
            "crashy",
            "--run-id",
            "r",
            "--step",
            &step,
            "--result",
            &result_of(&step).to_string(),
        ]);
    }
    let expected: Vec<Value> = (0..n).map(|j| result_of(&format!("each[{j}]"))).collect();
    assert_eq!(r["artifacts"]["out"], json!(expected));
    assert_eq!(r["state"]["version"], n as u64 + 1);
    let debug = root.ok(&["call", "think.debug", "--input", r#"{"workflow": "crashy", "run_id": "r"}"#]);
    assert_eq!(debug["consistent"], true);
}

/// Runs `count` processes at once; returns their (exit status, reply).
fn all_at_once(root: &Root, calls: &[Vec<String>]) -> Vec<(i32, Value)> {
    let children: Vec<(Child, &Vec<String>)> = calls
        .iter()
        .map(|args| (root.spawn(&args.iter().map(String::as_str).collect::<Vec<_>>()), args))
        .collect();
    children
        .into_iter()
        .map(|(child, args)| {
            let out = child.wait_with_output().unwrap();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            (out.status.code().expect("exited normally"), reply(&out, &args))
        })
        .collect()
}

fn next_call(run: &str, j: usize, expected_version: Option<u64>) -> Vec<String> {
    let step = format!("each[{j}]");
    let mut args = vec!["next", "crashy", "--run-id", run, "--step", &step, "--result"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    args.push(result_of(&step).to_string());
    if let Some(v) = expected_version {
        args.extend(["--expected-version".to_owned(), v.to_string()]);
    }
    args
}

/// Every reply is a success or one of the allowed errors; exit 0 or 1.
fn check_replies(replies: &[(i32, Value)]) -> (usize, usize) {
    let (mut ok, mut conflicts) = (0, 0);
    for (code, v) in replies {
        match (code, v.get("error").and_then(Value::as_str)) {
            (0, None) => ok += 1,
            (1, Some("STATE_CONFLICT" | "STEP_NOT_READY")) => conflicts += 1,
            _ => panic!("exit {code}: {v}"),
        }
    }
    (ok, conflicts)
}

fn assert_all_results(root: &Root, run: &str, n: usize) -> Value {
    let state = state(root, run);
    let expected: Vec<Value> = (0..n).map(|j| result_of(&format!("each[{j}]"))).collect();
    assert_eq!(state["captures"]["out"], json!(expected), "no update was lost");
    assert_eq!(state["steps"][1]["status"], "ready");
    assert_eq!(state["version"], n as u64, "one version per item");
    state
}

#[test]
fn eight_processes_submitting_to_one_run_lose_nothing() {
    let root = root("eight");
    let params = items(8).to_string();
    for round in 0..3 {
        let run = format!("plain-{round}");
        root.ok(&["plan", "crashy", "--run-id", &run, "--params", &params]);
        let calls: Vec<Vec<String>> = (0..8).map(|j| next_call(&run, j, None)).collect();
        let replies = all_at_once(&root, &calls);
        let (ok, _) = check_replies(&replies);
        assert_eq!(ok, 8, "without expected_version every submission is accepted: {replies:?}");
        // The last one accepted saw every item done.
        let versions: Vec<u64> =
            replies.iter().map(|(_, v)| v["state"]["version"].as_u64().unwrap()).collect();
        let mut sorted = versions.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=8).collect::<Vec<_>>(), "each reply has its own version: {versions:?}");
        assert_all_results(&root, &run, 8);
    }
}

#[test]
fn eight_processes_with_expected_version_retry_until_all_are_in() {
    let root = root("eight-ev");
    let params = items(8).to_string();
    root.ok(&["plan", "crashy", "--run-id", "ev", "--params", &params]);
    let mut pending: Vec<usize> = (0..8).collect();
    let (mut attempts, mut conflicts) = (0, 0);
    while !pending.is_empty() {
        attempts += 1;
        assert!(attempts < 40, "no progress");
        let version = state(&root, "ev")["version"].as_u64().unwrap();
        let calls: Vec<Vec<String>> = pending.iter().map(|&j| next_call("ev", j, Some(version))).collect();
        let replies = all_at_once(&root, &calls);
        let (ok, failed) = check_replies(&replies);
        assert_eq!(ok, 1, "exactly one submission at version {version} wins: {replies:?}");
        conflicts += failed;
        let winner = replies.iter().position(|(code, _)| *code == 0).unwrap();
        pending.remove(winner);
    }
    eprintln!("{attempts} rounds, {conflicts} STATE_CONFLICT replies");
    assert_all_results(&root, "ev", 8);
}

#[test]
fn duplicate_submissions_from_many_processes_are_idempotent() {
    let root = root("dup");
    let params = items(8).to_string();
    root.ok(&["plan", "crashy", "--run-id", "d", "--params", &params]);
    // Every item twice, sixteen processes at once.
    let calls: Vec<Vec<String>> = (0..16).map(|k| next_call("d", k % 8, None)).collect();
    let replies = all_at_once(&root, &calls);
    let (ok, _) = check_replies(&replies);
    assert_eq!(ok, 16, "a resent result is accepted again: {replies:?}");
    assert_all_results(&root, "d", 8);
    assert!(state_dir(&root).join("crashy__d.lock").is_file());
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

#[test]
fn the_journal_grows_then_is_compacted_into_the_snapshot() {
    const C: usize = savant_think::runtime::COMPACT_AFTER;
    let root = root("compact");
    root.ok(&["plan", "crashy", "--run-id", "c", "--params", &items(C + 8).to_string()]);
    let journal = state_dir(&root).join("crashy__c.journal");
    let mut lens = Vec::new();
    for j in 0..C + 8 {
        root.ok(&["next", "crashy", "--run-id", "c", "--step", &format!("each[{j}]"), "--result", "1"]);
        lens.push(file_len(&journal));
    }
    // C + 1 events in the journal, then a snapshot that holds them all.
    assert!(lens[C - 1] > lens[C - 2] && lens[C - 2] > 0, "{lens:?}");
    assert_eq!(lens[C], 0, "compacted after {} events: {lens:?}", C + 1);
    assert!(lens[C + 7] > 0, "{lens:?}");
    let snapshot: Value =
        serde_json::from_slice(&std::fs::read(state_dir(&root).join("crashy__c.json")).unwrap()).unwrap();
    assert_eq!(snapshot["version"], C + 1);
    assert_eq!(state(&root, "c")["version"], C + 8);
}
