//! What the engine is asked to do: from `linkemu udp ...` arguments or a
//! `linkemu run CONFIG.json` file (docs/reference/interfaces.md, "Config file"). Every problem is
//! a `ConfigError`: one line naming the bad argument or key and what was expected.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::control::Command;
use crate::spec::NetemSpec;

pub const MAX_PATHS: usize = 64;

#[derive(Debug)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(msg.into()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Udp,
    Tun,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Udp => "udp",
            Mode::Tun => "tun",
        }
    }
}

/// One side of a TUN path: the device name and the namespace to create it in
/// (None = the engine's own namespace).
#[derive(Debug, Clone)]
pub struct TunSide {
    pub netns: Option<PathBuf>,
    pub ifname: String,
}

#[derive(Debug, Clone)]
pub enum Endpoint {
    Udp { listen: SocketAddr, to: SocketAddr },
    Tun { a: TunSide, b: TunSide },
}

/// What a corrupted packet looks like to the receiving kernel in TUN mode (README.md,
/// "Corruption"). `Repair` (the default): a bit of the transport payload, the UDP/TCP
/// checksum recomputed, so the damage reaches the application. `Netem`: a bit anywhere
/// in the packet and no checksum touched, as tc-netem does, so the receiving kernel
/// drops it (TCP then retransmits, as it would over netem).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TunCorruption {
    #[default]
    Repair,
    Netem,
}

#[derive(Debug, Clone)]
pub struct PathConfig {
    pub name: String,
    pub forward: String,
    pub reverse: String,
    pub shared_queue: bool,
    pub endpoint: Endpoint,
    pub tun_corruption: TunCorruption,
}

#[derive(Debug, Clone)]
pub struct Scheduled {
    pub at_ms: u64,
    pub cmd: Command,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    pub seed: u64,
    pub stats: Option<PathBuf>,
    pub pcap: Option<PathBuf>,
    /// JSON-lines event trace of every packet's fate (trace.rs).
    pub trace: Option<PathBuf>,
    /// Keep only the trace's last this many lines (config key `trace_tail`): the end of a
    /// transfer too long to trace whole, written when the engine stops.
    pub trace_tail: Option<u64>,
    pub control: Option<PathBuf>,
    pub paths: Vec<PathConfig>,
    pub schedule: Vec<Scheduled>,
}

/// Parse a netem spec, naming where it came from in the error.
pub fn check_spec(what: &str, text: &str) -> Result<NetemSpec, ConfigError> {
    NetemSpec::parse(text).map_err(|e| ConfigError(format!("{what}: {e}")))
}

/// Resolve the reverse spec (absent = same as forward) and check both, and the
/// shared-queue rule: one queue has one spec.
fn finish_path(
    name: String,
    forward: String,
    reverse: Option<String>,
    shared_queue: bool,
    endpoint: Endpoint,
    ctx: &str,
) -> Result<PathConfig, ConfigError> {
    check_spec(&format!("{ctx}forward spec"), &forward)?;
    let reverse = match reverse {
        Some(r) => {
            check_spec(&format!("{ctx}reverse spec"), &r)?;
            if shared_queue && r.split_whitespace().ne(forward.split_whitespace()) {
                return err(format!(
                    "{ctx}with a shared queue the reverse spec must equal the forward spec or be absent (got {r:?} vs {forward:?})"
                ));
            }
            r
        }
        None => forward.clone(),
    };
    Ok(PathConfig {
        name,
        forward,
        reverse,
        shared_queue,
        endpoint,
        tun_corruption: TunCorruption::Repair,
    })
}

/// Parse `HOST:PORT` (IPv6 as `[::1]:5000`); names are resolved once, here.
pub fn parse_addr(what: &str, s: &str) -> Result<SocketAddr, ConfigError> {
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    match s.to_socket_addrs().ok().and_then(|mut it| it.next()) {
        Some(a) => Ok(a),
        None => err(format!("{what}: {s:?} is not HOST:PORT (IPv6 as [ADDR]:PORT)")),
    }
}

pub const UDP_USAGE: &str = "usage: linkemu udp --listen HOST:PORT --to HOST:PORT [--forward SPEC] [--reverse SPEC] \
[--shared-queue] [--seed N] [--stats FILE] [--pcap FILE] [--trace FILE] [--control SOCK]";

/// `linkemu udp ...` arguments (after the subcommand) as a one-path config.
pub fn from_udp_args(args: &[String]) -> Result<Config, ConfigError> {
    let (mut listen, mut to, mut forward, mut reverse) = (None, None, None, None);
    let (mut seed, mut stats, mut pcap, mut control, mut shared) = (1u64, None, None, None, false);
    let mut trace = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--shared-queue" {
            shared = true;
            continue;
        }
        let mut value = || match it.next() {
            Some(v) => Ok(v.clone()),
            None => err(format!("{flag} needs a value; {UDP_USAGE}")),
        };
        match flag.as_str() {
            "--listen" => listen = Some(parse_addr("--listen", &value()?)?),
            "--to" => to = Some(parse_addr("--to", &value()?)?),
            "--forward" => forward = Some(value()?),
            "--reverse" => reverse = Some(value()?),
            "--seed" => {
                let v = value()?;
                seed = v
                    .parse()
                    .map_err(|_| ConfigError(format!("--seed: {v:?} is not a non-negative integer")))?;
            }
            "--stats" => stats = Some(PathBuf::from(value()?)),
            "--pcap" => pcap = Some(PathBuf::from(value()?)),
            "--trace" => trace = Some(PathBuf::from(value()?)),
            "--control" => control = Some(PathBuf::from(value()?)),
            other => return err(format!("unknown argument {other:?}; {UDP_USAGE}")),
        }
    }
    let (Some(listen), Some(to)) = (listen, to) else {
        return err(format!("--listen and --to are required; {UDP_USAGE}"));
    };
    let path = finish_path(
        "p0".into(),
        forward.unwrap_or_default(),
        reverse,
        shared,
        Endpoint::Udp { listen, to },
        "",
    )?;
    Ok(Config {
        mode: Mode::Udp,
        seed,
        stats,
        pcap,
        trace,
        trace_tail: None,
        control,
        paths: vec![path],
        schedule: vec![],
    })
}

/// Reads typed fields out of a JSON object, naming `ctx` and the key in errors, and
/// rejects keys nobody asked for (typos must not pass silently).
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    ctx: String,
    known: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    fn new(v: &'a Value, ctx: impl Into<String>) -> Result<Self, ConfigError> {
        let ctx = ctx.into();
        match v.as_object() {
            Some(obj) => Ok(Fields {
                obj,
                ctx,
                known: vec![],
            }),
            None => err(format!("{ctx}: expected a JSON object, got {v}")),
        }
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.known.push(key);
        self.obj.get(key).filter(|v| !v.is_null())
    }

    fn string(&mut self, key: &'static str) -> Result<Option<String>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => err(format!("{}: \"{key}\" must be a string, got {v}", self.ctx)),
        }
    }

    fn bool(&mut self, key: &'static str) -> Result<bool, ConfigError> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => err(format!("{}: \"{key}\" must be true or false, got {v}", self.ctx)),
        }
    }

    fn u64(&mut self, key: &'static str) -> Result<Option<u64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) => Ok(Some(n)),
                None => err(format!(
                    "{}: \"{key}\" must be a non-negative integer, got {v}",
                    self.ctx
                )),
            },
        }
    }

    fn required<T>(&self, key: &str, v: Option<T>) -> Result<T, ConfigError> {
        v.ok_or_else(|| ConfigError(format!("{}: \"{key}\" is required", self.ctx)))
    }

    /// Fail on any key not read through this object (other than `allowed_extra`).
    fn no_unknown(&self, allowed_extra: &[&str]) -> Result<(), ConfigError> {
        for k in self.obj.keys() {
            if !self.known.contains(&k.as_str()) && !allowed_extra.contains(&k.as_str()) {
                return err(format!(
                    "{}: unknown key \"{k}\"; expected one of {}",
                    self.ctx,
                    self.known.join(", ")
                ));
            }
        }
        Ok(())
    }
}

fn tun_side(v: Option<&Value>, ctx: &str) -> Result<TunSide, ConfigError> {
    let v = v.ok_or_else(|| ConfigError(format!("{ctx} is required in tun mode")))?;
    let mut f = Fields::new(v, ctx)?;
    let netns = f.string("netns")?.map(|n| {
        // A bare name means the iproute2 location.
        if n.contains('/') {
            PathBuf::from(n)
        } else {
            PathBuf::from("/run/netns").join(n)
        }
    });
    let ifname = f.string("ifname")?;
    let ifname = f.required("ifname", ifname)?;
    if ifname.is_empty() || ifname.len() > 15 || ifname.contains(['/', ' ']) {
        return err(format!(
            "{ctx}: ifname {ifname:?} must be 1-15 characters without '/' or spaces"
        ));
    }
    f.no_unknown(&[])?;
    Ok(TunSide { netns, ifname })
}

fn path_from_json(v: &Value, i: usize, mode: Mode) -> Result<PathConfig, ConfigError> {
    let mut f = Fields::new(v, format!("paths[{i}]"))?;
    let name = f.string("name")?.unwrap_or_else(|| format!("p{i}"));
    let ctx = format!("path {name:?}: ");
    let forward = f.string("forward")?.unwrap_or_default();
    let reverse = f.string("reverse")?;
    let shared = f.bool("shared_queue")?;
    let (listen, to) = (f.string("listen")?, f.string("to")?);
    let (tun_a, tun_b) = (f.get("tun_a"), f.get("tun_b"));
    let tun_corruption = match f.string("tun_corruption")?.as_deref() {
        None | Some("repair") => TunCorruption::Repair,
        Some("netem") if mode == Mode::Tun => TunCorruption::Netem,
        Some("netem") => {
            return err(format!("{ctx}\"tun_corruption\": \"netem\" is for tun mode (in udp mode the application always gets the damaged datagram)"))
        }
        Some(other) => return err(format!("{ctx}\"tun_corruption\" must be \"repair\" or \"netem\", got {other:?}")),
    };
    f.no_unknown(&[])?;
    let endpoint = match mode {
        Mode::Udp => {
            let listen = f.required("listen", listen)?;
            let to = f.required("to", to)?;
            Endpoint::Udp {
                listen: parse_addr(&format!("{ctx}listen"), &listen)?,
                to: parse_addr(&format!("{ctx}to"), &to)?,
            }
        }
        Mode::Tun => Endpoint::Tun {
            a: tun_side(tun_a, &format!("{ctx}tun_a"))?,
            b: tun_side(tun_b, &format!("{ctx}tun_b"))?,
        },
    };
    let path = finish_path(name, forward, reverse, shared, endpoint, &ctx)?;
    Ok(PathConfig { tun_corruption, ..path })
}

/// Parse the text of a `linkemu run` config file.
pub fn from_json(text: &str) -> Result<Config, ConfigError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ConfigError(format!("config is not valid JSON: {e}")))?;
    let mut f = Fields::new(&v, "config")?;
    let mode = match f.string("mode")?.as_deref() {
        None | Some("udp") => Mode::Udp,
        Some("tun") => Mode::Tun,
        Some(m) => return err(format!("config: \"mode\" must be \"udp\" or \"tun\", got {m:?}")),
    };
    let seed = f.u64("seed")?.unwrap_or(1);
    let stats = f.string("stats")?.map(PathBuf::from);
    let pcap = f.string("pcap")?.map(PathBuf::from);
    let trace = f.string("trace")?.map(PathBuf::from);
    let trace_tail = f.u64("trace_tail")?;
    if trace_tail == Some(0) {
        return err("config: \"trace_tail\" must be a number of lines, at least 1");
    }
    let control = f.string("control")?.map(PathBuf::from);
    let paths_v = f.get("paths");
    let schedule_v = f.get("schedule");
    f.no_unknown(&[])?;

    let Some(Value::Array(pv)) = paths_v else {
        return err("config: \"paths\" must be a non-empty list of paths");
    };
    if pv.is_empty() || pv.len() > MAX_PATHS {
        return err(format!(
            "config: \"paths\" must hold 1 to {MAX_PATHS} paths, got {}",
            pv.len()
        ));
    }
    let paths = pv
        .iter()
        .enumerate()
        .map(|(i, p)| path_from_json(p, i, mode))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].iter().any(|q| q.name == p.name) {
            return err(format!("config: two paths are named {:?}", p.name));
        }
    }

    let mut schedule = vec![];
    match schedule_v {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let ctx = format!("schedule[{i}]");
                let at_ms = match item.get("at_ms").and_then(Value::as_u64) {
                    Some(t) => t,
                    None => {
                        return err(format!(
                            "{ctx}: \"at_ms\" (milliseconds from the first packet) is required"
                        ))
                    }
                };
                let cmd = Command::from_json(item, &["at_ms"]).map_err(|e| ConfigError(format!("{ctx}: {e}")))?;
                if matches!(cmd, Command::Stats) {
                    return err(format!("{ctx}: only down, up and change can be scheduled"));
                }
                cmd.check_paths(&paths)
                    .map_err(|e| ConfigError(format!("{ctx}: {e}")))?;
                schedule.push(Scheduled { at_ms, cmd });
            }
        }
        Some(v) => return err(format!("config: \"schedule\" must be a list, got {v}")),
    }
    schedule.sort_by_key(|s| s.at_ms); // stable: equal times keep file order
    Ok(Config {
        mode,
        seed,
        stats,
        pcap,
        trace,
        trace_tail,
        control,
        paths,
        schedule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn udp_args_minimal_and_ipv6() {
        let c = from_udp_args(&args(&["--listen", "[::1]:0", "--to", "127.0.0.1:5000"])).unwrap();
        assert_eq!(c.mode, Mode::Udp);
        let p = &c.paths[0];
        assert_eq!(p.forward, "");
        assert_eq!(p.reverse, "");
        match &p.endpoint {
            Endpoint::Udp { listen, to } => {
                assert!(listen.is_ipv6());
                assert_eq!(to.port(), 5000);
            }
            _ => panic!("not udp"),
        }
    }

    #[test]
    fn udp_args_errors_name_the_argument() {
        let e = from_udp_args(&args(&["--listen", "nonsense", "--to", "127.0.0.1:1"])).unwrap_err();
        assert!(e.0.starts_with("--listen"), "{e}");
        let e = from_udp_args(&args(&["--to", "127.0.0.1:1"])).unwrap_err();
        assert!(e.0.contains("--listen and --to are required"), "{e}");
        let e = from_udp_args(&args(&["--listen", "127.0.0.1:0", "--to", "127.0.0.1:1", "--bogus"])).unwrap_err();
        assert!(e.0.contains("\"--bogus\""), "{e}");
        let e = from_udp_args(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:1",
            "--seed",
            "-3",
        ]))
        .unwrap_err();
        assert!(e.0.starts_with("--seed"), "{e}");
        let e = from_udp_args(&args(&["--listen", "127.0.0.1:0", "--to"])).unwrap_err();
        assert!(e.0.starts_with("--to needs a value"), "{e}");
        assert!(!e.0.contains('\n'));
    }

    #[test]
    fn shared_queue_needs_equal_specs() {
        let base = [
            "--listen",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:1",
            "--shared-queue",
            "--forward",
            "loss 5%",
        ];
        assert!(from_udp_args(&args(&base)).is_ok());
        let mut same = base.to_vec();
        same.extend(["--reverse", "loss  5%"]);
        assert!(from_udp_args(&args(&same)).is_ok());
        let mut other = base.to_vec();
        other.extend(["--reverse", "loss 6%"]);
        let e = from_udp_args(&args(&other)).unwrap_err();
        assert!(e.0.contains("shared queue"), "{e}");
    }

    #[test]
    fn json_config_udp_and_tun() {
        let c = from_json(
            r#"{"mode":"udp","seed":7,"paths":[
                {"name":"a","forward":"loss 1%","listen":"127.0.0.1:0","to":"127.0.0.1:9"},
                {"listen":"127.0.0.1:0","to":"127.0.0.1:9"}],
               "schedule":[{"at_ms":20,"cmd":"up","path":"a"},{"at_ms":10,"cmd":"down","path":"a"}]}"#,
        )
        .unwrap();
        assert_eq!(c.seed, 7);
        assert_eq!(c.paths[1].name, "p1");
        assert_eq!(c.paths[0].reverse, "loss 1%");
        assert_eq!(c.schedule[0].at_ms, 10);

        let c = from_json(
            r#"{"mode":"tun","paths":[{"tun_a":{"netns":"ns-s","ifname":"rdt0"},
                                        "tun_b":{"netns":"/run/netns/ns-r","ifname":"rdt0"}}]}"#,
        )
        .unwrap();
        match &c.paths[0].endpoint {
            Endpoint::Tun { a, b } => {
                assert_eq!(a.netns.as_deref(), Some(std::path::Path::new("/run/netns/ns-s")));
                assert_eq!(b.netns.as_deref(), Some(std::path::Path::new("/run/netns/ns-r")));
            }
            _ => panic!("not tun"),
        }
    }

    #[test]
    fn tun_corruption_defaults_to_repair_and_netem_is_per_path() {
        let c = from_json(
            r#"{"mode":"tun","paths":[{"tun_a":{"ifname":"a0"},"tun_b":{"ifname":"b0"}},
                                       {"tun_a":{"ifname":"a1"},"tun_b":{"ifname":"b1"},"tun_corruption":"netem"},
                                       {"tun_a":{"ifname":"a2"},"tun_b":{"ifname":"b2"},"tun_corruption":"repair"}]}"#,
        )
        .unwrap();
        let rules: Vec<_> = c.paths.iter().map(|p| p.tun_corruption).collect();
        assert_eq!(
            rules,
            [TunCorruption::Repair, TunCorruption::Netem, TunCorruption::Repair]
        );
        let c = from_udp_args(&args(&["--listen", "127.0.0.1:0", "--to", "127.0.0.1:1"])).unwrap();
        assert_eq!(c.paths[0].tun_corruption, TunCorruption::Repair);
    }

    #[test]
    fn json_config_errors_are_one_line_and_name_the_key() {
        let cases = [
            ("[]", "expected a JSON object"),
            ("{", "not valid JSON"),
            (r#"{"paths":[]}"#, "\"paths\" must hold"),
            (r#"{"mode":"tcp","paths":[]}"#, "\"mode\""),
            (r#"{"pathz":[]}"#, "unknown key \"pathz\""),
            (r#"{"paths":[{"listen":"127.0.0.1:0"}]}"#, "\"to\" is required"),
            (r#"{"paths":[{"listen":"127.0.0.1:0","to":"x"}]}"#, "to: \"x\""),
            (r#"{"seed":-1,"paths":[]}"#, "\"seed\""),
            (
                r#"{"mode":"tun","paths":[{"tun_a":{"ifname":"a"}}]}"#,
                "tun_b is required",
            ),
            (
                r#"{"mode":"tun","paths":[{"tun_a":{"ifname":"waytoolongname01"},"tun_b":{"ifname":"b"}}]}"#,
                "1-15",
            ),
            (
                r#"{"paths":[{"name":"x","listen":"127.0.0.1:0","to":"127.0.0.1:1"},{"name":"x","listen":"127.0.0.1:0","to":"127.0.0.1:1"}]}"#,
                "two paths",
            ),
            (
                r#"{"paths":[{"listen":"127.0.0.1:0","to":"127.0.0.1:1"}],"schedule":[{"at_ms":1,"cmd":"down","path":"zz"}]}"#,
                "\"zz\"",
            ),
            (
                r#"{"paths":[{"listen":"127.0.0.1:0","to":"127.0.0.1:1"}],"schedule":[{"cmd":"down","path":"p0"}]}"#,
                "at_ms",
            ),
            (
                r#"{"paths":[{"listen":"127.0.0.1:0","to":"127.0.0.1:1"}],"schedule":[{"at_ms":1,"cmd":"explode"}]}"#,
                "explode",
            ),
            (
                r#"{"paths":[{"listen":"127.0.0.1:0","to":"127.0.0.1:1","tun_corruption":"netem"}]}"#,
                "is for tun mode",
            ),
            (
                r#"{"mode":"tun","paths":[{"tun_a":{"ifname":"a"},"tun_b":{"ifname":"b"},"tun_corruption":"drop"}]}"#,
                "\"repair\" or \"netem\"",
            ),
        ];
        for (text, want) in cases {
            let e = from_json(text).unwrap_err().0;
            assert!(e.contains(want), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
