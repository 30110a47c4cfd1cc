//! `linkemu`: the command line of docs/reference/interfaces.md, section 1.
//! Exit status: 0 after SIGTERM/SIGINT, 2 for bad usage, a bad spec or config, or a
//! socket/device that cannot be opened (one line on stderr), 1 if serving fails.

use std::io::Write;
use std::process::exit;

use linkemu::config::{self, Config, ConfigError, UDP_USAGE};
use linkemu::event::Engine;

const USAGE: &str = "usage: linkemu udp --listen HOST:PORT --to HOST:PORT [options] | linkemu run CONFIG.json | linkemu check [--json] SPEC";

fn fail(code: i32, msg: impl std::fmt::Display) -> ! {
    eprintln!("linkemu: {msg}");
    exit(code)
}

fn parse_args(args: &[String]) -> Result<Option<Config>, ConfigError> {
    match args.first().map(String::as_str) {
        Some("udp") => {
            if args.iter().any(|a| a == "-h" || a == "--help") {
                println!("{UDP_USAGE}");
                return Ok(None);
            }
            config::from_udp_args(&args[1..]).map(Some)
        }
        Some("run") => match args.get(1..) {
            Some([file]) => {
                let text =
                    std::fs::read_to_string(file).map_err(|e| ConfigError(format!("config file {file}: {e}")))?;
                config::from_json(&text)
                    .map_err(|e| ConfigError(format!("{file}: {e}")))
                    .map(Some)
            }
            _ => Err(ConfigError(
                "run takes one argument, the config file: linkemu run CONFIG.json".into(),
            )),
        },
        Some("check") => match args.get(1..) {
            Some([spec]) => config::check_spec("spec", spec).map(|_| None),
            // the parse as the harness plans with it (linkemu::summary), one JSON line
            Some([flag, spec]) if flag == "--json" => config::check_spec("spec", spec).map(|parsed| {
                println!("{}", linkemu::summary::summary(&parsed));
                None
            }),
            _ => Err(ConfigError(
                "check takes the spec, and --json before it to print the parse: linkemu check [--json] SPEC".into(),
            )),
        },
        Some("-h" | "--help") => {
            println!("{USAGE}");
            Ok(None)
        }
        Some(other) => Err(ConfigError(format!("unknown command {other:?}; {USAGE}"))),
        None => Err(ConfigError(USAGE.into())),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = match parse_args(&args) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => exit(0),
        Err(e) => fail(2, e),
    };
    let mut engine = Engine::open(cfg).unwrap_or_else(|e| fail(2, e));
    let mut out = std::io::stdout().lock();
    // The harness waits for this line; if nobody reads stdout any more, carry on.
    let _ = writeln!(out, "{}", engine.ready_line()).and_then(|_| out.flush());
    drop(out);
    if let Err(e) = engine.run() {
        fail(1, e);
    }
}
