//! `savant-think ui`: the run inspector alone, on 127.0.0.1, over the
//! project's state store (file or PostgreSQL). A new random token each
//! start (unless --token / SAVANT_THINK_TOKEN) goes in the printed address;
//! the page keeps it in a cookie. docs/inspector.md.

use crate::fail;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct UiArgs {
    /// The port on 127.0.0.1 (0: any free one).
    #[arg(long, default_value_t = 7340)]
    port: u16,
    /// Open the page in the default browser (xdg-open / open).
    #[arg(long)]
    open: bool,
    /// Show runs, offer no action (reset, fork, upgrade, archive, delete).
    #[arg(long)]
    read_only: bool,
    /// The token the page needs (default: a new random one each start, printed in the address).
    #[arg(long, env = "SAVANT_THINK_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Project root. Default: $SAVANT_PATH, else the nearest directory above holding savant-think.toml, else one holding workflows/, else the current directory (see `savant-think root`).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// 16 random bytes as hex, from the system's random source.
fn random_token() -> Result<String, String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot make a token ({e}); pass --token"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Serves until interrupted.
pub fn run(args: UiArgs) -> ExitCode {
    let root = match super::env::root(args.root.as_deref()) {
        Ok(r) => r,
        Err(m) => return fail(m),
    };
    let token = match args.token.filter(|t| !t.trim().is_empty()) {
        Some(t) => t,
        None => match random_token() {
            Ok(t) => t,
            Err(m) => return fail(m),
        },
    };
    super::logging::init("warn");
    let engine = match super::env::engine(&root) {
        Ok(e) => e,
        Err(e) => return fail(format!("cannot open the project: {}", e.human())),
    };
    let (hosts, origins) = savant_think::inspect::http::loopback();
    let options = savant_think::inspect::http::UiOptions {
        token: Some(token.clone()),
        read_only: args.read_only,
        hosts,
        origins,
    };
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], args.port));
    let open = args.open;
    let announce = move |local: std::net::SocketAddr| {
        let url = format!("http://{local}/ui/?token={token}");
        // Tests and scripts read this line for the address.
        let shown = savant_think::fsx::canonical(&root).unwrap_or_else(|_| root.clone());
        eprintln!("savant-think: inspector at {url} (root {}; Ctrl-C stops it)", shown.display());
        if open {
            let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
            if let Err(e) = std::process::Command::new(opener).arg(&url).spawn() {
                eprintln!("warning: cannot open a browser ({opener}: {e}); open the address above");
            }
        }
    };
    match super::runtime::block_on(savant_think::inspect::http::serve(engine, addr, options, announce)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(m)) | Err(m) => fail(m),
    }
}
