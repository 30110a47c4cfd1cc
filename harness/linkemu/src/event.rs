//! The engine: one thread, one epoll loop over the paths' sockets or TUN devices, the
//! control socket, a signalfd and one timerfd armed at the earliest moment anything is
//! due (a packet leaving a link, or a scheduled command). The thread sleeps in
//! epoll_wait whenever nothing is due, so an idle link costs no CPU.
//!
//! Each path has one netem `Link` per direction, or one for both (`shared_queue`,
//! netem on `lo`); a packet's tag is `id << 8 | endpoint << 1 | direction`, where the
//! endpoint is the UDP client index (0 in TUN mode) and `id` the arrival number mod
//! 2^24 (it joins a packet's trace lines).

use std::io;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use crate::config::{Config, Endpoint, Mode, PathConfig, Scheduled, TunCorruption};
use crate::control::{error_reply, Command, ControlServer, Direction, Input};
use crate::link::{Departure, Fate, Link, Verdict, WIRE_OVERHEAD_IP, WIRE_OVERHEAD_UDP4, WIRE_OVERHEAD_UDP6};
use crate::pcap::{self, Pcap};
use crate::spec::NetemSpec;
use crate::stats::{payload_hash, DirStats, SeenPayloads};
use crate::sys::{self, Epoll, Signals, Timer};
use crate::trace::{self, Trace};
use crate::tun::{self, TunIo};
use crate::udp::UdpIo;

pub const FORWARD: usize = 0;
pub const REVERSE: usize = 1;

/// Packets read from one TUN device before looking at due departures again (UDP
/// sockets: one recvmmsg batch): bounds how late a burst of arrivals makes a departure.
const READ_BATCH: usize = 32;
/// Payload hashes remembered per direction for `repeats`.
const SEEN_CAPACITY: usize = 1 << 17;
/// Final spin: the timer is armed this long before a deadline and the rest is spun,
/// absorbing part of the time a sleeping thread takes to wake. 10 µs cuts the delay
/// error's median at no visible CPU cost, where 25 µs costs a good part of a core at
/// 100 Mbit/s (BENCHMARKS.md, "The engine").
/// Nothing due that soon → no spin: an idle link sleeps. LINKEMU_SPIN_US overrides it.
const DEFAULT_SPIN_NS: u64 = 10_000;

fn spin_ns_from_env() -> u64 {
    std::env::var("LINKEMU_SPIN_US")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(DEFAULT_SPIN_NS, |us| us * 1000)
}

/// Read buffer: the largest UDP payload or IP packet.
const BUF_SIZE: usize = 65536;

// Epoll tokens: kind in the top byte, path index, then a per-kind index.
const K_TIMER: u64 = 1;
const K_SIGNAL: u64 = 2;
const K_CONTROL: u64 = 3;
const K_CONTROL_CONN: u64 = 4;
const K_UDP_LISTEN: u64 = 5;
const K_UDP_UPSTREAM: u64 = 6;
const K_TUN: u64 = 7;

fn token(kind: u64, path: usize, index: u64) -> u64 {
    kind << 56 | (path as u64) << 40 | index
}

fn untoken(t: u64) -> (u64, usize, u64) {
    (t >> 56, ((t >> 40) & 0xffff) as usize, t & 0xff_ffff_ffff)
}

// The endpoint takes 7 bits of a tag: more than udp::MAX_CLIENTS (64).
const _: () = assert!(crate::udp::MAX_CLIENTS < 128);

fn tag(id: u32, endpoint: usize, dir: usize) -> u32 {
    (id & 0xff_ffff) << 8 | (endpoint as u32) << 1 | dir as u32
}

/// (id, endpoint, direction) of a tag.
fn untag(t: u32) -> (u32, usize, usize) {
    (t >> 8, ((t >> 1) & 0x7f) as usize, (t & 1) as usize)
}

enum PathIo {
    Udp(UdpIo),
    Tun(TunIo),
}

struct PathRt {
    name: String,
    /// Each direction's: a path can go down one way only.
    up: [bool; 2],
    shared: bool,
    specs: [String; 2],
    /// One link per direction, or one shared by both.
    links: Vec<Link>,
    stats: [DirStats; 2],
    /// Payloads seen arriving (for `repeats`) and seen delivered (for `last_fresh_out_ns`).
    seen: [SeenPayloads; 2],
    delivered_seen: [SeenPayloads; 2],
    io: PathIo,
    /// TUN mode: where a bit may flip and whether the checksum is repaired (tun.rs).
    tun_corruption: TunCorruption,
}

impl PathRt {
    fn link_of(&self, dir: usize) -> usize {
        if self.shared {
            0
        } else {
            dir
        }
    }
}

/// Every link gets its own seed, derived from the run's seed (splitmix64), so paths
/// and directions draw independent but reproducible numbers.
fn link_seed(seed: u64, path: usize, link: usize) -> u64 {
    let mut z = seed ^ ((path as u64) << 8 | link as u64).wrapping_mul(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

fn parse_spec(text: &str) -> Result<NetemSpec, String> {
    NetemSpec::parse(text).map_err(|e| e.to_string())
}

pub struct Engine {
    mode: Mode,
    seed: u64,
    paths: Vec<PathRt>,
    epoll: Epoll,
    timer: Timer,
    signals: Signals,
    control: Option<ControlServer>,
    stats_path: Option<PathBuf>,
    pcap: Option<Pcap>,
    trace: Option<Trace>,
    /// Arrival number of the next packet (trace ids).
    next_id: u32,
    schedule: Vec<Scheduled>,
    next_scheduled: usize,
    /// How long before a deadline the timer fires; the rest is spun.
    spin_ns: u64,
    /// When the first packet arrived: the origin of the schedule's times.
    first_packet_ns: Option<u64>,
    /// recvmmsg buffers (UDP mode) and the read buffer (TUN mode).
    batch: sys::RecvBatch,
    buf: Vec<u8>,
}

impl Engine {
    /// Open every socket, device and file the config names. Errors are one line.
    pub fn open(cfg: Config) -> Result<Engine, String> {
        fn os(what: &'static str) -> impl Fn(io::Error) -> String {
            move |e| format!("{what}: {e}")
        }
        sys::set_timer_slack_1ns();
        sys::try_realtime();
        let epoll = Epoll::new().map_err(os("epoll"))?;
        let timer = Timer::new().map_err(os("timerfd"))?;
        let signals = Signals::new().map_err(os("signalfd"))?;
        epoll.add(timer.raw_fd(), token(K_TIMER, 0, 0)).map_err(os("epoll"))?;
        epoll
            .add(signals.raw_fd(), token(K_SIGNAL, 0, 0))
            .map_err(os("epoll"))?;

        let mut paths = vec![];
        for (i, pc) in cfg.paths.iter().enumerate() {
            let path = Self::open_path(cfg.seed, i, pc)?;
            match &path.io {
                PathIo::Udp(u) => epoll.add(u.listen_fd(), token(K_UDP_LISTEN, i, 0)),
                PathIo::Tun(t) => epoll
                    .add(t.fd(FORWARD), token(K_TUN, i, FORWARD as u64))
                    .and_then(|_| epoll.add(t.fd(REVERSE), token(K_TUN, i, REVERSE as u64))),
            }
            .map_err(os("epoll"))?;
            paths.push(path);
        }
        let control = match &cfg.control {
            Some(p) => {
                let c = ControlServer::bind(p)?;
                epoll
                    .add(c.listener_fd(), token(K_CONTROL, 0, 0))
                    .map_err(os("epoll"))?;
                Some(c)
            }
            None => None,
        };
        if let Some(p) = &cfg.stats {
            // Found out now, not at exit when the run's counters would be lost.
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            if !dir.is_dir() {
                return Err(format!(
                    "stats file {}: directory {} does not exist",
                    p.display(),
                    dir.display()
                ));
            }
        }
        let pcap = match &cfg.pcap {
            Some(p) => {
                Some(Pcap::create(p, pcap::DEFAULT_MAX_BYTES).map_err(|e| format!("pcap {}: {e}", p.display()))?)
            }
            None => None,
        };
        let trace = match &cfg.trace {
            Some(t) => {
                let names: Vec<String> = cfg.paths.iter().map(|p| p.name.clone()).collect();
                Some(
                    Trace::create(
                        t,
                        trace::DEFAULT_MAX_BYTES,
                        cfg.trace_tail,
                        cfg.mode.name(),
                        cfg.seed,
                        &names,
                    )
                    .map_err(|e| format!("trace {}: {e}", t.display()))?,
                )
            }
            None => None,
        };
        Ok(Engine {
            mode: cfg.mode,
            seed: cfg.seed,
            paths,
            epoll,
            timer,
            signals,
            control,
            stats_path: cfg.stats,
            pcap,
            trace,
            next_id: 0,
            schedule: cfg.schedule,
            next_scheduled: 0,
            first_packet_ns: None,
            spin_ns: spin_ns_from_env(),
            batch: sys::RecvBatch::default(),
            buf: vec![0; BUF_SIZE],
        })
    }

    fn open_path(seed: u64, i: usize, pc: &PathConfig) -> Result<PathRt, String> {
        let ctx = |e: String| format!("path {:?}: {e}", pc.name);
        let (io, overhead) = match &pc.endpoint {
            Endpoint::Udp { listen, to } => {
                let io = UdpIo::open(*listen, *to).map_err(|e| ctx(format!("listen {listen}: {e}")))?;
                // The rate counts what netem on lo counts: payload + UDP + IP + Ethernet.
                let oh = |a: &std::net::SocketAddr| {
                    if a.is_ipv6() {
                        WIRE_OVERHEAD_UDP6
                    } else {
                        WIRE_OVERHEAD_UDP4
                    }
                };
                (PathIo::Udp(io), [oh(to), oh(listen)])
            }
            Endpoint::Tun { a, b } => (PathIo::Tun(TunIo::open(a, b).map_err(ctx)?), [WIRE_OVERHEAD_IP; 2]),
        };
        let specs = [pc.forward.clone(), pc.reverse.clone()];
        let mut links = vec![];
        if pc.shared_queue {
            // one queue, each direction drawing from the seed it would have on its own queue
            let spec = parse_spec(&specs[FORWARD]).map_err(ctx)?;
            let mut link = Link::shared(spec, link_seed(seed, i, FORWARD), link_seed(seed, i, REVERSE));
            link.set_wire_overhead(overhead[FORWARD]);
            links.push(link);
        } else {
            for l in [FORWARD, REVERSE] {
                let mut link = Link::new(parse_spec(&specs[l]).map_err(ctx)?, link_seed(seed, i, l));
                link.set_wire_overhead(overhead[l]);
                links.push(link);
            }
        }
        Ok(PathRt {
            name: pc.name.clone(),
            up: [true; 2],
            shared: pc.shared_queue,
            specs,
            links,
            stats: Default::default(),
            seen: [SeenPayloads::new(SEEN_CAPACITY), SeenPayloads::new(SEEN_CAPACITY)],
            delivered_seen: [SeenPayloads::new(SEEN_CAPACITY), SeenPayloads::new(SEEN_CAPACITY)],
            io,
            tun_corruption: pc.tun_corruption,
        })
    }

    /// The ready line of docs/reference/interfaces.md.
    pub fn ready_line(&self) -> String {
        let paths: Vec<Value> = self
            .paths
            .iter()
            .map(|p| match &p.io {
                PathIo::Udp(u) => json!({"name": p.name, "listen": u.local_addr().to_string()}),
                PathIo::Tun(t) => json!({"name": p.name, "tun": t.names}),
            })
            .collect();
        json!({"event": "ready", "pid": std::process::id(), "paths": paths}).to_string()
    }

    /// Serve until SIGTERM/SIGINT; then write the stats file and flush the pcap.
    pub fn run(&mut self) -> Result<(), String> {
        let mut tokens = Vec::with_capacity(64);
        loop {
            self.epoll.wait(&mut tokens).map_err(|e| format!("epoll_wait: {e}"))?;
            // A stop is served after the rest of its batch: what waited on a socket beside
            // it was put into the link before the stop and counts (grader.disturbance).
            let mut stop = false;
            for &t in &tokens {
                let (kind, path, index) = untoken(t);
                match kind {
                    K_TIMER => {
                        self.timer.acknowledge();
                        self.spin_until_due();
                    }
                    K_SIGNAL => stop |= self.signals.take(),
                    K_CONTROL => self.accept_control(),
                    K_CONTROL_CONN => self.serve_control(index),
                    K_UDP_LISTEN | K_UDP_UPSTREAM | K_TUN => self.drain(kind, path, index as usize),
                    _ => {}
                }
                self.release_due(sys::now_ns());
            }
            if stop {
                break;
            }
            self.timer
                .arm(self.next_deadline().map(|d| d.saturating_sub(self.spin_ns)));
        }
        self.write_stats_file()?;
        if let Some(p) = &mut self.pcap {
            p.flush();
        }
        if let Some(t) = &mut self.trace {
            t.flush();
        }
        Ok(())
    }

    /// Take what is waiting on one descriptor into the links.
    fn drain(&mut self, kind: u64, p: usize, index: usize) {
        if kind == K_TUN {
            self.drain_tun(p, index);
        } else {
            self.drain_udp(kind == K_UDP_LISTEN, p, index);
        }
    }

    /// One recvmmsg batch from the listen socket (forward) or a client's upstream
    /// socket (reverse). Fully consumed here, so one batch buffer serves every socket.
    fn drain_udp(&mut self, from_listen: bool, p: usize, client: usize) {
        let path = &mut self.paths[p];
        let fd = match &path.io {
            PathIo::Udp(u) if from_listen => u.listen_fd(),
            PathIo::Udp(u) => u.upstream_fd(client),
            PathIo::Tun(_) => return,
        };
        let n = match self.batch.recv(fd) {
            Ok(n) => n,
            Err(_) => {
                // ICMP errors (e.g. port unreachable) concern what we sent forward.
                path.stats[FORWARD].io_errors += 1;
                return;
            }
        };
        let now = sys::now_ns();
        if n > 0 {
            self.first_packet_ns.get_or_insert(now);
        }
        for i in 0..n {
            let (data, from, truncated) = self.batch.get(i);
            let (dir, endpoint) = if from_listen {
                let PathIo::Udp(u) = &mut path.io else { return };
                match from.and_then(|a| u.client_for(a)) {
                    Some((c, new_fd)) => {
                        if let Some(fd) = new_fd {
                            // Fails only when out of memory; then replies are lost.
                            let _ = self.epoll.add(fd, token(K_UDP_UPSTREAM, p, c as u64));
                        }
                        (FORWARD, c)
                    }
                    None => {
                        path.stats[FORWARD].io_errors += 1;
                        continue;
                    }
                }
            } else {
                (REVERSE, client)
            };
            if truncated {
                path.stats[dir].io_errors += 1;
                continue;
            }
            let id = self.next_id;
            self.next_id = self.next_id.wrapping_add(1);
            ingress(
                self.mode,
                p,
                path,
                dir,
                endpoint,
                data.to_vec(),
                now,
                id,
                &mut self.trace,
            );
        }
    }

    fn drain_tun(&mut self, p: usize, dir: usize) {
        for _ in 0..READ_BATCH {
            let path = &mut self.paths[p];
            let PathIo::Tun(t) = &path.io else { return };
            match t.read(dir, &mut self.buf) {
                Ok(Some(len)) => {
                    let now = sys::now_ns();
                    self.first_packet_ns.get_or_insert(now);
                    let id = self.next_id;
                    self.next_id = self.next_id.wrapping_add(1);
                    ingress(
                        self.mode,
                        p,
                        path,
                        dir,
                        0,
                        self.buf[..len].to_vec(),
                        now,
                        id,
                        &mut self.trace,
                    );
                }
                Ok(None) => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // The device is gone (e.g. its namespace was deleted): stop
                    // watching it, or a level-triggered error would spin the loop.
                    path.stats[dir].io_errors += 1;
                    self.epoll.remove(t.fd(dir));
                    return;
                }
            }
        }
    }

    /// Send every packet that is due, and run scheduled commands that are due.
    fn release_due(&mut self, now: u64) {
        while let Some(s) = self.schedule.get(self.next_scheduled) {
            let due = match self.first_packet_ns {
                Some(t0) => t0 + s.at_ms * 1_000_000,
                None => break,
            };
            if due > now {
                break;
            }
            let cmd = s.cmd.clone();
            self.next_scheduled += 1;
            // Checked when the config was read, so this cannot fail.
            let _ = self.execute(&cmd);
        }
        let mode = self.mode;
        for (p, path) in self.paths.iter_mut().enumerate() {
            for li in 0..path.links.len() {
                while let Some(dep) = path.links[li].dequeue(now) {
                    let out = Outputs {
                        pcap: &mut self.pcap,
                        trace: &mut self.trace,
                        path: p,
                    };
                    let seen = &mut path.delivered_seen;
                    deliver(
                        mode,
                        &path.io,
                        path.up,
                        path.tun_corruption,
                        &mut path.stats,
                        seen,
                        out,
                        dep,
                    );
                }
            }
        }
    }

    /// Woken `spin_ns` early: wait out the rest of the way to the deadline.
    fn spin_until_due(&self) {
        if let Some(due) = self.next_deadline() {
            while sys::now_ns() < due && due - sys::now_ns() <= self.spin_ns {
                std::hint::spin_loop();
            }
        }
    }

    fn next_deadline(&self) -> Option<u64> {
        let links = self
            .paths
            .iter()
            .flat_map(|p| p.links.iter())
            .filter_map(|l| l.next_due());
        let scheduled = self
            .first_packet_ns
            .and_then(|t0| self.schedule.get(self.next_scheduled).map(|s| t0 + s.at_ms * 1_000_000));
        links.chain(scheduled).min()
    }

    fn accept_control(&mut self) {
        let Some(ctl) = &mut self.control else { return };
        for (id, fd) in ctl.accept() {
            if self.epoll.add(fd, token(K_CONTROL_CONN, 0, id)).is_err() {
                ctl.close(id);
            }
        }
    }

    fn serve_control(&mut self, id: u64) {
        let Some(ctl) = &mut self.control else { return };
        let inputs = ctl.read(id);
        for input in inputs {
            match input {
                Input::Request(req) => {
                    let reply = match req.and_then(|cmd| self.execute(&cmd)) {
                        Ok(v) => v,
                        Err(e) => error_reply(&e),
                    };
                    if let Some(ctl) = &mut self.control {
                        ctl.reply(id, &reply);
                    }
                }
                Input::Closed => {
                    if let Some(fd) = self.control.as_mut().and_then(|c| c.close(id)) {
                        self.epoll.remove(fd);
                    }
                }
            }
        }
    }

    /// Carry out a control or scheduled command; the reply's JSON, or a one-line error.
    fn execute(&mut self, cmd: &Command) -> Result<Value, String> {
        if let Command::Stats = cmd {
            self.write_stats_file()?;
            return Ok(json!({"ok": true, "stats": self.stats_json()}));
        }
        let name = cmd.path().unwrap_or_default();
        let Some(path) = self.paths.iter_mut().find(|p| p.name == name) else {
            let names: Vec<&str> = self.paths.iter().map(|p| p.name.as_str()).collect();
            return Err(format!("no path named {name:?}; paths are {}", names.join(", ")));
        };
        match cmd {
            Command::Down { direction, .. } | Command::Up { direction, .. } => {
                let up = matches!(cmd, Command::Up { .. });
                for &d in direction.indices() {
                    path.up[d] = up;
                }
            }
            Command::Change { direction, spec, .. } => {
                let parsed = parse_spec(spec)?;
                if path.shared && *direction != Direction::Both {
                    return Err(format!(
                        "path {name:?} has a shared queue: change it with direction \"both\""
                    ));
                }
                for &d in direction.indices() {
                    path.specs[d] = spec.clone();
                    let li = path.link_of(d);
                    path.links[li].set_spec(parsed.clone());
                }
            }
            Command::Stats => unreachable!("handled above"),
        }
        Ok(json!({"ok": true}))
    }

    pub fn stats_json(&self) -> Value {
        let mut total = [DirStats::default(), DirStats::default()];
        let mut per_path = Map::new();
        for p in &self.paths {
            for d in [FORWARD, REVERSE] {
                total[d].merge(&p.stats[d]);
            }
            per_path.insert(
                p.name.clone(),
                json!({"up": p.up == [true, true], "forward_up": p.up[FORWARD], "reverse_up": p.up[REVERSE], "forward_spec": p.specs[FORWARD], "reverse_spec": p.specs[REVERSE],
                       "forward": p.stats[FORWARD].to_json(), "reverse": p.stats[REVERSE].to_json()}),
            );
        }
        json!({"seed": self.seed, "mode": self.mode.name(),
               "forward": total[FORWARD].to_json(), "reverse": total[REVERSE].to_json(),
               "pcap_skipped": self.pcap.as_ref().map(|p| p.skipped),
               "trace_skipped": self.trace.as_ref().map(|t| t.skipped),
               "paths": per_path})
    }

    /// Write the stats file atomically (temporary file, then rename): a reader never
    /// sees half a file.
    fn write_stats_file(&self) -> Result<(), String> {
        let Some(path) = &self.stats_path else { return Ok(()) };
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let text = serde_json::to_string_pretty(&self.stats_json()).expect("stats serialise");
        std::fs::write(&tmp, text + "\n")
            .and_then(|_| std::fs::rename(&tmp, path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("stats file {}: {e}", path.display())
            })
    }
}

/// A packet entered path `p` in direction `dir`: count it, trace it and hand it to the link.
#[allow(clippy::too_many_arguments)]
fn ingress(
    mode: Mode,
    p: usize,
    path: &mut PathRt,
    dir: usize,
    endpoint: usize,
    data: Vec<u8>,
    now: u64,
    id: u32,
    trace: &mut Option<Trace>,
) {
    let li = path.link_of(dir);
    let st = &mut path.stats[dir];
    st.arrived(now, data.len());
    let range = match mode {
        Mode::Udp => 0..data.len(),
        Mode::Tun => tun::corruption_range(&data, path.tun_corruption),
    };
    let key = repeat_key(mode, endpoint, &data);
    let id = id & 0xff_ffff;
    let shown = match mode {
        Mode::Udp => range.clone(),
        Mode::Tun => tun::head_range(&data),
    };
    if !path.up[dir] {
        st.down_drops += 1;
        if let Some(t) = trace {
            t.arrival(now, p, dir, id, &data[shown], data.len(), false, None);
        }
        return;
    }
    let repeat = key.is_some_and(|k| path.seen[dir].check_and_insert(k));
    if repeat {
        st.repeats += 1;
    }
    // The head is taken before the link may flip a bit in it.
    let head = trace
        .as_ref()
        .map(|_| data[shown.start..shown.end.min(shown.start + trace::HEAD_BYTES)].to_vec());
    let len = data.len();
    let link = &mut path.links[li];
    let draw = match mode {
        Mode::Udp => Some(tun::datagram_draw_key(&data)),
        Mode::Tun => tun::draw_key(&data),
    };
    let verdict = if dir == REVERSE {
        link.enqueue_reverse_keyed(now, data, range, tag(id, endpoint, dir), draw)
    } else {
        link.enqueue_keyed(now, data, range, tag(id, endpoint, dir), draw)
    };
    count_verdict(st, verdict);
    if let (Some(t), Some(head)) = (trace, head) {
        t.arrival(now, p, dir, id, &head, len, repeat, Some(verdict));
    }
}

/// What tells a payload's copies apart from other payloads: in UDP mode the client and
/// the datagram, in TUN mode the transport's ports, sequence number and payload. None
/// for packets without payload.
fn repeat_key(mode: Mode, endpoint: usize, data: &[u8]) -> Option<u64> {
    match mode {
        Mode::Udp => (!data.is_empty()).then(|| payload_hash(&[&endpoint.to_be_bytes(), data])),
        Mode::Tun => tun::repeat_key(data),
    }
}

fn count_verdict(st: &mut DirStats, v: Verdict) {
    count_fate(st, v.original);
    // A link-made copy goes through the pipeline as well: count what happened to it
    // the same way, so packets_in + duplicated = delivered + lost + queue_drops (+ down_drops).
    if let Some(dup) = v.duplicate {
        st.duplicated += 1;
        count_fate(st, dup);
    }
}

fn count_fate(st: &mut DirStats, fate: Fate) {
    match fate {
        Fate::Queued { corrupted, reordered } => {
            st.corrupted += corrupted as u64;
            st.reordered += reordered as u64;
        }
        Fate::Lost => st.lost += 1,
        Fate::QueueDrop => st.queue_drops += 1,
    }
}

/// Where a departure is recorded besides the counters.
struct Outputs<'a> {
    pcap: &'a mut Option<Pcap>,
    trace: &'a mut Option<Trace>,
    path: usize,
}

/// Hand a departing packet to its destination and count it. `delivered_seen` tells a
/// payload's first intact delivery (fresh: it brought something new) from a repeat's.
#[allow(clippy::too_many_arguments)]
fn deliver(
    mode: Mode,
    io: &PathIo,
    up: [bool; 2],
    rule: TunCorruption,
    stats: &mut [DirStats; 2],
    delivered_seen: &mut [SeenPayloads; 2],
    out: Outputs,
    mut dep: Departure,
) {
    let (id, endpoint, dir) = untag(dep.tag);
    let st = &mut stats[dir];
    let (duplicate, corrupted) = (dep.duplicate, dep.corrupted);
    let mut traced = |now: u64, fate: &str| {
        if let Some(t) = out.trace {
            t.departure(now, out.path, dir, id, duplicate, fate, corrupted);
        }
    };
    // A path cut while packets were on it loses them.
    if !up[dir] {
        st.down_drops += 1;
        traced(sys::now_ns(), "down_drop");
        return;
    }
    // Lateness is judged when the send starts: the send itself costs the same on any relay.
    let now = sys::now_ns();
    let sent = match io {
        PathIo::Udp(u) => {
            if dir == FORWARD {
                u.send_forward(endpoint, &dep.data)
            } else {
                u.send_reverse(endpoint, &dep.data)
            }
        }
        PathIo::Tun(t) => {
            if dep.corrupted && rule == TunCorruption::Repair {
                tun::repair_checksum(&mut dep.data);
            }
            t.write(dir, &dep.data)
        }
    };
    if sent.is_err() {
        st.io_errors += 1;
        traced(now, "io_error");
        return;
    }
    traced(now, "delivered");
    st.departed(now, dep.data.len(), dep.due, dep.arrived);
    // ICMP errors are the kernels' answers, not the transfer's packets. A corrupted copy
    // brings nothing; a transport packet without payload (no key) counts as fresh.
    if mode == Mode::Udp || !tun::is_icmp(&dep.data) {
        st.last_transport_out_ns = Some(now);
        if !corrupted && !repeat_key(mode, endpoint, &dep.data).is_some_and(|k| delivered_seen[dir].check_and_insert(k))
        {
            st.last_fresh_out_ns = Some(now);
            st.repeats_to_last_fresh = st.repeats;
        }
        if dir == REVERSE {
            let fwd = &mut stats[FORWARD];
            fwd.repeats_to_last_answer = fwd.repeats;
        }
    }
    if let Some(pc) = out.pcap {
        let wall = sys::realtime_ns();
        match (mode, io) {
            (Mode::Udp, PathIo::Udp(u)) => {
                let (client, target) = (u.client_addr(endpoint), u.target());
                let (src, dst) = if dir == FORWARD {
                    (client, target)
                } else {
                    (target, client)
                };
                pc.packet(wall, &pcap::synth_udp(src, dst, &dep.data));
            }
            _ => pc.packet(wall, &dep.data),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        for (k, p, i) in [
            (K_TIMER, 0, 0),
            (K_TUN, 63, 1),
            (K_CONTROL_CONN, 0, 1 << 39),
            (K_UDP_UPSTREAM, 65535, 63),
        ] {
            assert_eq!(untoken(token(k, p, i)), (k, p, i));
        }
    }

    #[test]
    fn link_seeds_differ_per_path_and_direction_and_repeat() {
        let s = [
            link_seed(1, 0, 0),
            link_seed(1, 0, 1),
            link_seed(1, 1, 0),
            link_seed(2, 0, 0),
        ];
        for i in 0..s.len() {
            for j in 0..i {
                assert_ne!(s[i], s[j]);
            }
        }
        assert_eq!(link_seed(1, 0, 0), s[0]);
    }

    #[test]
    fn tags_round_trip_and_ids_wrap() {
        for (id, ep, dir) in [(0, 0, 0), (5, 63, 1), (0xff_ffff, 127, 1)] {
            assert_eq!(untag(tag(id, ep, dir)), (id, ep, dir));
        }
        assert_eq!(untag(tag(1 << 24 | 3, 2, 0)), (3, 2, 0));
    }
}
