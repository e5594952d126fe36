//! The integration tests, in one binary: one link instead of one per file
//! (each linked the whole library), which keeps a cold `cargo test` small
//! and fast. Run one file with `cargo test --test it <file>::`.

#[path = "../support/mod.rs"]
mod support;

mod agent_support;
mod common;
mod mcp_support;

mod agent_bad_input;
mod agent_generate;
mod agent_grammar;
mod agent_guard;
mod agent_replay;
mod agent_run;
mod agent_run_backend;
mod agent_run_cli;
mod bad_input;
mod bad_input_text;
mod cases;
mod check_conventions;
mod check_fix;
mod check_scale;
mod cli;
mod cli_formats;
mod corpus;
mod corrupt_state;
#[cfg(target_os = "linux")]
mod crowd;
mod docs;
mod durability;
mod engine;
mod engine_cache;
mod engine_cli;
mod engine_cli_runs;
mod engine_crash;
mod engine_replay;
mod environment;
mod exec_waits;
mod first_hour;
mod format_schema;
#[cfg(unix)]
mod hostile_fs;
mod hostile_load;
mod hostile_memory;
mod http_protocol;
mod init;
#[cfg(unix)]
mod inspect_browser;
mod inspect_http;
mod inspect_term;
mod layering;
mod layering_scan;
mod lsp;
mod lsp_incremental;
mod lsp_retypes;
mod lsp_runs;
mod matrix;
mod matrix_cells;
mod matrix_drive;
mod matrix_lifecycle;
mod matrix_run;
mod mcp_clients;
mod mcp_http;
mod mcp_stdio;
mod mcp_stdio_wire;
mod mcp_tasks;
mod migrate;
mod migrate_cli;
mod observing;
mod operating;
mod operating_roles;
mod project;
mod project_loader;
mod read_token;
mod replicas;
mod runs;
mod runs_over_time;
mod side_files;
mod soak;
mod state_crash;
mod store_once;
mod subworkflows;
#[cfg(unix)]
mod symlinked_state;
mod telemetry;
mod test_cmd;
mod test_files;
mod test_update;
mod test_waits;
mod timers;
mod tools_sync;
mod unlocked_next;
mod upgrade;
mod waits;
mod waits_surfaces;
mod yaml_bad_input;
