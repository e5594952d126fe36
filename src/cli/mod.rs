//! Command-line glue of the binary (clap types and output), per command.

pub mod check;
