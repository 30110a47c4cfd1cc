//! tc-netem's option syntax, parsed from one string into a [`NetemSpec`].
//!
//! Follows iproute2's `tc/q_netem.c`: keywords may be abbreviated as `tc` allows,
//! times without a unit are microseconds, percentages may omit the `%`, rates
//! without a unit are bit/s, and optional numbers after a keyword are taken
//! only when the next token looks like a number.
//!
//! Accepted: delay/latency (+ jitter, correlation, distribution), loss/drop (random,
//! state, gemodel), corrupt, duplicate, reorder, gap, rate (+ overheads), slot, limit,
//! seed. `ecn` is refused with a clear error (the link cannot mark CE yet).

use std::fmt;

/// netem's default queue limit (packets in the delay line).
pub const DEFAULT_LIMIT: u32 = 1000;

/// A probability as the user wrote it, in percent (0..=100).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percent(pub f64);

impl Percent {
    /// netem's fixed-point form: `rint(fraction * u32::MAX)`.
    pub fn scaled(self) -> u32 {
        (self.0 / 100.0 * u32::MAX as f64).round() as u32
    }
    pub fn is_zero(self) -> bool {
        self.0 == 0.0
    }
}

/// A probability with netem's optional correlation (`P [C]`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Chance {
    pub p: Percent,
    pub corr: Percent,
}

/// Jitter distribution (`distribution NAME`); netem's default is uniform.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Distribution {
    #[default]
    Uniform,
    Normal,
    Pareto,
    ParetoNormal,
}

/// The loss model (`loss random|state|gemodel ...`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum LossModel {
    #[default]
    None,
    /// `loss [random] P [C]`
    Random(Chance),
    /// `loss state p13 [p31 [p32 [p23 [p14]]]]`: netem's 4-state Markov (GI) model.
    State {
        p13: Percent,
        p31: Percent,
        p32: Percent,
        p23: Percent,
        p14: Percent,
    },
    /// `loss gemodel p [r [1-h [1-k]]]`: Gilbert-Elliott.
    GilbertElliott {
        p: Percent,
        r: Percent,
        one_minus_h: Percent,
        one_minus_k: Percent,
    },
}

/// `rate RATE [PACKETOVERHEAD [CELLSIZE [CELLOVERHEAD]]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Bytes per second, as netem holds it.
    pub bytes_per_sec: u64,
    pub packet_overhead: i32,
    pub cell_size: u32,
    pub cell_overhead: i32,
}

/// When slots open (`slot MIN [MAX]` or `slot distribution DIST DELAY JITTER`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotDelay {
    /// Uniform in [min, max).
    Range { min_ns: u64, max_ns: u64 },
    /// From a jitter table (not `uniform`), as `delay DELAY JITTER distribution DIST`.
    Table {
        distribution: Distribution,
        delay_ns: u64,
        jitter_ns: u64,
    },
}

/// netem's `slot`: packets leave only in slots, each letting out at most `packets`
/// packets and `bytes` bytes (0 = no limit), like Wi-Fi or LTE aggregation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub delay: SlotDelay,
    pub packets: u32,
    pub bytes: u32,
}

/// One netem qdisc's options. `NetemSpec::default()` is a perfect link.
#[derive(Clone, Debug, PartialEq)]
pub struct NetemSpec {
    pub delay_ns: u64,
    pub jitter_ns: u64,
    pub delay_corr: Percent,
    pub distribution: Distribution,
    pub loss: LossModel,
    pub corrupt: Chance,
    pub duplicate: Chance,
    pub reorder: Chance,
    /// Reorder gap; 0 = no reordering (tc sets 1 when `reorder` is given alone).
    pub gap: u32,
    pub rate: Option<Rate>,
    pub slot: Option<Slot>,
    pub limit: u32,
    pub seed: Option<u64>,
}

impl Default for NetemSpec {
    fn default() -> Self {
        NetemSpec {
            delay_ns: 0,
            jitter_ns: 0,
            delay_corr: Percent(0.0),
            distribution: Distribution::Uniform,
            loss: LossModel::None,
            corrupt: Chance::default(),
            duplicate: Chance::default(),
            reorder: Chance::default(),
            gap: 0,
            rate: None,
            slot: None,
            limit: DEFAULT_LIMIT,
            seed: None,
        }
    }
}

/// A spec that could not be parsed: one line naming the bad token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub spec: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad spec {:?}: {}", self.spec, self.message)
    }
}

impl std::error::Error for SpecError {}

impl std::str::FromStr for NetemSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        NetemSpec::parse(s)
    }
}

impl NetemSpec {
    /// Parse tc-netem's options, e.g. `"delay 10ms 2ms distribution normal loss 1%"`.
    pub fn parse(spec: &str) -> Result<NetemSpec, SpecError> {
        Parser {
            tokens: spec.split_whitespace().collect(),
            pos: 0,
        }
        .parse()
        .map_err(|message| SpecError {
            spec: spec.to_string(),
            message,
        })
    }

    /// True when the spec changes nothing (a perfect link).
    pub fn is_perfect(&self) -> bool {
        *self
            == NetemSpec {
                limit: self.limit,
                seed: self.seed,
                ..NetemSpec::default()
            }
    }
}

/// Keywords in the order q_netem.c tries them; like `tc`, any prefix of a keyword
/// selects it, the first in this order winning ("r" is reorder, "ra" rate).
const KEYWORDS: &[&str] = &[
    "limit",
    "latency",
    "delay",
    "loss",
    "drop",
    "ecn",
    "reorder",
    "corrupt",
    "gap",
    "duplicate",
    "distribution",
    "rate",
    "slot",
    "seed",
];

const EXPECTED_KEYWORDS: &str =
    "delay, distribution, loss, corrupt, duplicate, reorder, gap, rate, slot, limit or seed";
const TIME_EXAMPLE: &str = "a time (expected e.g. 10ms, 500us, 1s)";
const PERCENT_EXAMPLE: &str = "a percentage (expected 0-100, e.g. 5% or 0.5%)";
const RATE_EXAMPLE: &str = "a rate (expected e.g. 10mbit, 500kbit, 1gbit, 100kbps)";

struct Parser<'a> {
    tokens: Vec<&'a str>,
    pos: usize,
}

type Res<T> = Result<T, String>;

impl<'a> Parser<'a> {
    fn parse(mut self) -> Res<NetemSpec> {
        let mut s = NetemSpec::default();
        let mut seen_loss = false;
        let mut seen_distribution = false;
        while let Some(tok) = self.next_token() {
            let keyword = KEYWORDS
                .iter()
                .find(|k| k.starts_with(tok))
                .ok_or_else(|| format!("unknown option {tok:?} (expected {EXPECTED_KEYWORDS})"))?;
            match *keyword {
                "limit" => {
                    s.limit = self.value(keyword, "a packet count", parse_u32)?;
                    if s.limit == 0 {
                        return Err(
                            "\"limit 0\" would drop every packet (expected a packet count of at least 1)".into(),
                        );
                    }
                }
                "latency" | "delay" => {
                    s.delay_ns = self.value(keyword, TIME_EXAMPLE, parse_time)?;
                    if let Some(j) = self.optional(TIME_EXAMPLE, parse_time)? {
                        s.jitter_ns = j;
                        if let Some(c) = self.optional(PERCENT_EXAMPLE, parse_percent)? {
                            s.delay_corr = c;
                        }
                    }
                }
                "loss" | "drop" => {
                    if seen_loss {
                        return Err(format!("{tok:?} given twice (expected one loss model)"));
                    }
                    seen_loss = true;
                    s.loss = self.loss_model(keyword)?;
                }
                "ecn" => {
                    return Err(format!(
                        "{tok:?} is not supported by linkemu (expected {EXPECTED_KEYWORDS})"
                    ))
                }
                "slot" => s.slot = Some(self.slot()?),
                "reorder" => s.reorder = self.chance(keyword)?,
                "corrupt" => s.corrupt = self.chance(keyword)?,
                "duplicate" => s.duplicate = self.chance(keyword)?,
                "gap" => s.gap = self.value(keyword, "a packet count", parse_u32)?,
                "distribution" => {
                    seen_distribution = true;
                    s.distribution =
                        self.value(keyword, "normal, pareto, paretonormal or uniform", parse_distribution)?;
                }
                "rate" => {
                    let bytes_per_sec = self.value(keyword, RATE_EXAMPLE, parse_rate)?;
                    let int = "an integer number of bytes";
                    // Overheads may be negative (tc's NEXT_IS_SIGNED_NUMBER).
                    let packet_overhead = self.optional_signed(int, parse_i32)?.unwrap_or(0);
                    let cell_size = self.optional(int, parse_u32)?.unwrap_or(0);
                    let cell_overhead = self.optional_signed(int, parse_i32)?.unwrap_or(0);
                    s.rate = Some(Rate {
                        bytes_per_sec,
                        packet_overhead,
                        cell_size,
                        cell_overhead,
                    });
                }
                "seed" => s.seed = Some(self.value(keyword, "an unsigned integer", parse_u64)?),
                _ => unreachable!("every keyword is handled"),
            }
        }
        // The checks tc makes after reading every option.
        if !s.reorder.p.is_zero() {
            if s.delay_ns == 0 {
                return Err(
                    "reordering is not possible without some delay (expected e.g. \"delay 10ms reorder 25%\")".into(),
                );
            }
            if s.gap == 0 {
                s.gap = 1;
            }
        } else if s.gap > 0 {
            return Err("\"gap\" given without a reorder probability (expected e.g. \"reorder 25% gap 5\")".into());
        }
        if seen_distribution && s.distribution != Distribution::Uniform && (s.delay_ns == 0 || s.jitter_ns == 0) {
            return Err(
                "a distribution needs a delay and a jitter (expected e.g. \"delay 100ms 20ms distribution normal\")"
                    .into(),
            );
        }
        Ok(s)
    }

    fn next_token(&mut self) -> Option<&'a str> {
        let t = self.tokens.get(self.pos).copied();
        self.pos += 1;
        t
    }

    /// The value a keyword requires.
    fn value<T>(&mut self, keyword: &str, what: &str, parse: fn(&str) -> Option<T>) -> Res<T> {
        match self.next_token() {
            None => Err(format!("{keyword:?} needs a value (expected {what})")),
            Some(tok) => parse(tok).ok_or_else(|| format!("{tok:?} is not {what}")),
        }
    }

    /// An optional value: taken, as tc does, only when the next token starts with a digit.
    fn optional<T>(&mut self, what: &str, parse: fn(&str) -> Option<T>) -> Res<Option<T>> {
        self.optional_if(|c| c.is_ascii_digit(), what, parse)
    }

    /// An optional value that may start with a minus sign.
    fn optional_signed<T>(&mut self, what: &str, parse: fn(&str) -> Option<T>) -> Res<Option<T>> {
        self.optional_if(|c| c.is_ascii_digit() || c == '-', what, parse)
    }

    fn optional_if<T>(&mut self, starts: fn(char) -> bool, what: &str, parse: fn(&str) -> Option<T>) -> Res<Option<T>> {
        match self.tokens.get(self.pos) {
            Some(tok) if tok.starts_with(starts) => {
                self.pos += 1;
                parse(tok).map(Some).ok_or_else(|| format!("{tok:?} is not {what}"))
            }
            _ => Ok(None),
        }
    }

    /// `P [C]` for corrupt, duplicate, reorder and random loss.
    fn chance(&mut self, keyword: &str) -> Res<Chance> {
        let p = self.value(keyword, PERCENT_EXAMPLE, parse_percent)?;
        let corr = self.optional(PERCENT_EXAMPLE, parse_percent)?.unwrap_or_default();
        Ok(Chance { p, corr })
    }

    /// `slot MIN [MAX] [packets N] [bytes N]` or
    /// `slot distribution DIST DELAY JITTER [packets N] [bytes N]`.
    fn slot(&mut self) -> Res<Slot> {
        let delay = if let Some(min_ns) = self.optional(TIME_EXAMPLE, parse_time)? {
            // One time alone means slots exactly that far apart.
            let max_ns = self.optional(TIME_EXAMPLE, parse_time)?.unwrap_or(min_ns);
            if max_ns < min_ns {
                return Err(format!(
                    "slot maximum {} is below its minimum {} (expected MIN MAX)",
                    fmt_time(max_ns),
                    fmt_time(min_ns)
                ));
            }
            SlotDelay::Range { min_ns, max_ns }
        } else {
            let expected = "a time or \"distribution\" (expected e.g. \"slot 10ms 20ms\")";
            match self.next_token() {
                Some("distribution") => {}
                Some(tok) => return Err(format!("{tok:?} after \"slot\" is not {expected}")),
                None => return Err(format!("\"slot\" needs a value ({expected})")),
            }
            let tables = "normal, pareto or paretonormal";
            let distribution = self.value("slot distribution", tables, parse_distribution)?;
            if distribution == Distribution::Uniform {
                return Err(format!(
                    "slot distribution \"uniform\" has no table (expected {tables}, or \"slot MIN MAX\" for uniform)"
                ));
            }
            let delay_ns = self.value("slot distribution", TIME_EXAMPLE, parse_time)?;
            let jitter_ns = self.value("slot distribution", TIME_EXAMPLE, parse_time)?;
            if jitter_ns == 0 {
                return Err(
                    "a slot distribution needs a jitter above 0 (expected e.g. \"slot distribution normal 10ms 2ms\")"
                        .into(),
                );
            }
            SlotDelay::Table {
                distribution,
                delay_ns,
                jitter_ns,
            }
        };
        let mut slot = Slot {
            delay,
            packets: 0,
            bytes: 0,
        };
        for (word, field) in [("packets", &mut slot.packets), ("bytes", &mut slot.bytes)] {
            if self.tokens.get(self.pos).is_some_and(|t| word.starts_with(t)) {
                self.pos += 1;
                *field = self.value(word, "a positive count", parse_positive)?;
            }
        }
        Ok(slot)
    }

    fn loss_model(&mut self, keyword: &str) -> Res<LossModel> {
        let expected = "random, state, gemodel or a percentage";
        let Some(tok) = self.tokens.get(self.pos).copied() else {
            return Err(format!("{keyword:?} needs a value (expected {expected})"));
        };
        // tc's old syntax: "loss 5%" means "loss random 5%".
        if tok.starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(LossModel::Random(self.chance(keyword)?));
        }
        self.pos += 1;
        let pct = |p: &mut Self| p.optional(PERCENT_EXAMPLE, parse_percent);
        match tok {
            "random" => Ok(LossModel::Random(self.chance("loss random")?)),
            "state" => {
                let p13 = self.value("loss state", PERCENT_EXAMPLE, parse_percent)?;
                // iproute2's defaults: a Bernoulli model unless told more.
                let p31 = pct(self)?.unwrap_or(Percent(100.0 - p13.0));
                let p32 = pct(self)?.unwrap_or(Percent(0.0));
                let p23 = pct(self)?.unwrap_or(Percent(100.0));
                let p14 = pct(self)?.unwrap_or(Percent(0.0));
                Ok(LossModel::State {
                    p13,
                    p31,
                    p32,
                    p23,
                    p14,
                })
            }
            "gemodel" => {
                let p = self.value("loss gemodel", PERCENT_EXAMPLE, parse_percent)?;
                // iproute2's defaults: r = 100%, 1-h = 100% (all lost in bad), 1-k = 0.
                let r = pct(self)?.unwrap_or(Percent(100.0));
                let one_minus_h = pct(self)?.unwrap_or(Percent(100.0));
                let one_minus_k = pct(self)?.unwrap_or(Percent(0.0));
                Ok(LossModel::GilbertElliott {
                    p,
                    r,
                    one_minus_h,
                    one_minus_k,
                })
            }
            _ => Err(format!("{tok:?} is not a loss model (expected {expected})")),
        }
    }
}

/// Split a token into the number it starts with (strtod's decimal form) and the rest.
fn split_number(tok: &str) -> Option<(f64, &str)> {
    let b = tok.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - digits_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac;
    }
    if digits == 0 {
        return None;
    }
    // An exponent only if digits follow it, so "5e" is 5 with unit "e".
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let value: f64 = tok[..i].parse().ok()?;
    value.is_finite().then_some((value, &tok[i..]))
}

/// tc's `get_time64`: a bare number is microseconds. Returns nanoseconds.
fn parse_time(tok: &str) -> Option<u64> {
    let (v, unit) = split_number(tok)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "us" | "usec" | "usecs" => 1e3,
        "s" | "sec" | "secs" => 1e9,
        "ms" | "msec" | "msecs" => 1e6,
        "ns" | "nsec" | "nsecs" => 1.0,
        _ => return None,
    };
    let ns = (v * scale).round();
    // Up to a day: anything longer is a typo, and keeps time arithmetic far from overflow.
    (0.0..=86_400e9).contains(&ns).then_some(ns as u64)
}

/// tc's `parse_percent`: "5%" or "5", within 0..=100.
fn parse_percent(tok: &str) -> Option<Percent> {
    let (v, rest) = split_number(tok)?;
    (matches!(rest, "" | "%") && (0.0..=100.0).contains(&v)).then_some(Percent(v))
}

/// tc's `get_rate64`: bits per second unless the unit says bytes (…Bps, case-insensitive,
/// so "mbps" is megabytes). A bare number is bit/s. Returns bytes per second.
fn parse_rate(tok: &str) -> Option<u64> {
    let (v, unit) = split_number(tok)?;
    let bits: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "bit" => 1.0,
        "kibit" => 1024.0,
        "kbit" => 1e3,
        "mibit" => 1024.0 * 1024.0,
        "mbit" => 1e6,
        "gibit" => 1024.0 * 1024.0 * 1024.0,
        "gbit" => 1e9,
        "tibit" => 1024f64.powi(4),
        "tbit" => 1e12,
        "bps" => 8.0,
        "kibps" => 8.0 * 1024.0,
        "kbps" => 8e3,
        "mibps" => 8.0 * 1024.0 * 1024.0,
        "mbps" => 8e6,
        "gibps" => 8.0 * 1024f64.powi(3),
        "gbps" => 8e9,
        "tibps" => 8.0 * 1024f64.powi(4),
        "tbps" => 8e12,
        _ => return None,
    };
    let bytes = (v * bits / 8.0).floor();
    // At least 1 byte/s; at most 100 Tbit/s.
    (1.0..=12.5e12).contains(&bytes).then_some(bytes as u64)
}

fn parse_u32(tok: &str) -> Option<u32> {
    tok.parse().ok()
}

/// A count netem holds as a positive s32.
fn parse_positive(tok: &str) -> Option<u32> {
    tok.parse().ok().filter(|&n: &u32| n >= 1 && n <= i32::MAX as u32)
}

fn parse_i32(tok: &str) -> Option<i32> {
    tok.parse().ok()
}

fn parse_u64(tok: &str) -> Option<u64> {
    tok.parse().ok()
}

fn parse_distribution(tok: &str) -> Option<Distribution> {
    match tok {
        "uniform" => Some(Distribution::Uniform),
        "normal" => Some(Distribution::Normal),
        "pareto" => Some(Distribution::Pareto),
        "paretonormal" => Some(Distribution::ParetoNormal),
        _ => None,
    }
}

/// A time in the largest unit that keeps it an integer, so it parses back exactly.
fn fmt_time(ns: u64) -> String {
    match ns {
        0 => "0us".into(),
        _ if ns.is_multiple_of(1_000_000_000) => format!("{}s", ns / 1_000_000_000),
        _ if ns.is_multiple_of(1_000_000) => format!("{}ms", ns / 1_000_000),
        _ if ns.is_multiple_of(1_000) => format!("{}us", ns / 1_000),
        _ => format!("{ns}ns"),
    }
}

fn fmt_rate(bytes_per_sec: u64) -> String {
    let bits = bytes_per_sec * 8;
    match bits {
        _ if bits.is_multiple_of(1_000_000_000) => format!("{}gbit", bits / 1_000_000_000),
        _ if bits.is_multiple_of(1_000_000) => format!("{}mbit", bits / 1_000_000),
        _ if bits.is_multiple_of(1_000) => format!("{}kbit", bits / 1_000),
        _ => format!("{bits}bit"),
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0)
    }
}

impl fmt::Display for Chance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.p)?;
        if !self.corr.is_zero() {
            write!(f, " {}", self.corr)?;
        }
        Ok(())
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Distribution::Uniform => "uniform",
            Distribution::Normal => "normal",
            Distribution::Pareto => "pareto",
            Distribution::ParetoNormal => "paretonormal",
        })
    }
}

/// The canonical tc form; `NetemSpec::parse(&s.to_string()) == Ok(s)`.
impl fmt::Display for NetemSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if self.delay_ns != 0 || self.jitter_ns != 0 || !self.delay_corr.is_zero() {
            let mut d = format!("delay {}", fmt_time(self.delay_ns));
            if self.jitter_ns != 0 || !self.delay_corr.is_zero() {
                d += &format!(" {}", fmt_time(self.jitter_ns));
                if !self.delay_corr.is_zero() {
                    d += &format!(" {}", self.delay_corr);
                }
            }
            if self.distribution != Distribution::Uniform {
                d += &format!(" distribution {}", self.distribution);
            }
            parts.push(d);
        }
        match self.loss {
            LossModel::None => {}
            LossModel::Random(c) => parts.push(format!("loss random {c}")),
            LossModel::State {
                p13,
                p31,
                p32,
                p23,
                p14,
            } => parts.push(format!("loss state {p13} {p31} {p32} {p23} {p14}")),
            LossModel::GilbertElliott {
                p,
                r,
                one_minus_h,
                one_minus_k,
            } => parts.push(format!("loss gemodel {p} {r} {one_minus_h} {one_minus_k}")),
        }
        for (name, c) in [("corrupt", self.corrupt), ("duplicate", self.duplicate)] {
            if !c.p.is_zero() || !c.corr.is_zero() {
                parts.push(format!("{name} {c}"));
            }
        }
        if !self.reorder.p.is_zero() || !self.reorder.corr.is_zero() {
            parts.push(format!("reorder {}", self.reorder));
        }
        if self.gap != 0 {
            parts.push(format!("gap {}", self.gap));
        }
        if let Some(r) = self.rate {
            let mut s = format!("rate {}", fmt_rate(r.bytes_per_sec));
            if r.packet_overhead != 0 || r.cell_size != 0 || r.cell_overhead != 0 {
                s += &format!(" {}", r.packet_overhead);
                if r.cell_size != 0 || r.cell_overhead != 0 {
                    s += &format!(" {} {}", r.cell_size, r.cell_overhead);
                }
            }
            parts.push(s);
        }
        if let Some(slot) = self.slot {
            let mut s = match slot.delay {
                SlotDelay::Range { min_ns, max_ns } => {
                    format!("slot {} {}", fmt_time(min_ns), fmt_time(max_ns))
                }
                SlotDelay::Table {
                    distribution,
                    delay_ns,
                    jitter_ns,
                } => {
                    format!(
                        "slot distribution {distribution} {} {}",
                        fmt_time(delay_ns),
                        fmt_time(jitter_ns)
                    )
                }
            };
            if slot.packets != 0 {
                s += &format!(" packets {}", slot.packets);
            }
            if slot.bytes != 0 {
                s += &format!(" bytes {}", slot.bytes);
            }
            parts.push(s);
        }
        if self.limit != DEFAULT_LIMIT {
            parts.push(format!("limit {}", self.limit));
        }
        if let Some(seed) = self.seed {
            parts.push(format!("seed {seed}"));
        }
        f.write_str(&parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> NetemSpec {
        NetemSpec::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(s: &str) -> String {
        NetemSpec::parse(s).unwrap_err().to_string()
    }

    #[test]
    fn empty_is_perfect() {
        assert!(ok("").is_perfect());
        assert!(ok("   ").is_perfect());
        assert_eq!(ok("").to_string(), "");
    }

    #[test]
    fn every_option_at_once() {
        let s = ok("delay 100ms 20ms 25% distribution normal loss 5% duplicate 1% corrupt 0.1% reorder 10% 50% gap 5 rate 10mbit 20 limit 100");
        assert_eq!(
            (s.delay_ns, s.jitter_ns, s.delay_corr),
            (100_000_000, 20_000_000, Percent(25.0))
        );
        assert_eq!(s.distribution, Distribution::Normal);
        assert_eq!(
            s.loss,
            LossModel::Random(Chance {
                p: Percent(5.0),
                corr: Percent(0.0)
            })
        );
        assert_eq!(s.duplicate.p, Percent(1.0));
        assert_eq!(s.corrupt.p, Percent(0.1));
        assert_eq!(
            s.reorder,
            Chance {
                p: Percent(10.0),
                corr: Percent(50.0)
            }
        );
        assert_eq!(s.gap, 5);
        assert_eq!(
            s.rate,
            Some(Rate {
                bytes_per_sec: 1_250_000,
                packet_overhead: 20,
                cell_size: 0,
                cell_overhead: 0
            })
        );
        assert_eq!(s.limit, 100);
        assert_eq!(ok(&s.to_string()), s);
    }

    #[test]
    fn units_as_tc() {
        assert_eq!(ok("delay 10").delay_ns, 10_000, "bare time is microseconds");
        assert_eq!(ok("delay 1.5ms").delay_ns, 1_500_000);
        assert_eq!(ok("delay 2s").delay_ns, 2_000_000_000);
        assert_eq!(ok("delay 7usec").delay_ns, 7_000);
        assert_eq!(ok("delay 1MSEC").delay_ns, 1_000_000);
        assert_eq!(ok("rate 100kbit").rate.unwrap().bytes_per_sec, 12_500);
        assert_eq!(
            ok("rate 1mbps").rate.unwrap().bytes_per_sec,
            1_000_000,
            "mbps is megabytes"
        );
        assert_eq!(ok("rate 1mibit").rate.unwrap().bytes_per_sec, 131_072);
        assert_eq!(ok("rate 8000").rate.unwrap().bytes_per_sec, 1000, "bare rate is bit/s");
        assert_eq!(ok("loss 5").loss, ok("loss random 5%").loss, "bare percent, old syntax");
    }

    #[test]
    fn abbreviations_as_tc() {
        assert_eq!(
            ok("del 10ms lo 1% dup 2% r 5% ra 1mbit"),
            ok("delay 10ms loss 1% duplicate 2% reorder 5% rate 1mbit")
        );
        assert_eq!(ok("latency 3ms drop 1%"), ok("delay 3ms loss 1%"));
    }

    #[test]
    fn defaults_as_iproute2() {
        assert_eq!(ok("reorder 25% delay 1ms").gap, 1);
        assert_eq!(
            ok("loss gemodel 1%").loss,
            LossModel::GilbertElliott {
                p: Percent(1.0),
                r: Percent(100.0),
                one_minus_h: Percent(100.0),
                one_minus_k: Percent(0.0)
            }
        );
        assert_eq!(
            ok("loss state 2%").loss,
            LossModel::State {
                p13: Percent(2.0),
                p31: Percent(98.0),
                p32: Percent(0.0),
                p23: Percent(100.0),
                p14: Percent(0.0)
            }
        );
        assert_eq!(ok("delay 1ms").limit, 1000);
    }

    #[test]
    fn errors_name_the_token() {
        assert_eq!(
            err("delay 10xs"),
            r#"bad spec "delay 10xs": "10xs" is not a time (expected e.g. 10ms, 500us, 1s)"#
        );
        assert!(err("loss 120%").contains("\"120%\" is not a percentage"));
        assert!(err("loss -1%").contains("\"-1%\" is not a loss model"));
        assert!(err("limit 0").contains("limit 0"));
        assert!(err("limit -3").contains("\"-3\" is not a packet count"));
        assert!(err("reorder 5%").contains("without some delay"));
        assert!(err("delay 5ms gap 3").contains("without a reorder"));
        assert!(err("delay").contains("\"delay\" needs a value"));
        assert!(err("wobble 3").contains("unknown option \"wobble\""));
        assert!(err("delay 1ms distribution cauchy").contains("\"cauchy\" is not normal, pareto"));
        assert!(err("delay 1ms distribution normal").contains("needs a delay and a jitter"));
        assert!(err("loss 1% loss 2%").contains("given twice"));
        assert!(err("rate 10furlongs").contains("is not a rate"));
        assert!(err("rate 0bit").contains("is not a rate"));
        assert!(err("delay 10ms 20xs").contains("\"20xs\" is not a time"));
        for e in [err("delay 10xs"), err("rate"), err("loss state")] {
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn slot_syntax_as_tc() {
        assert_eq!(
            ok("slot 5ms packets 3").slot,
            Some(Slot {
                delay: SlotDelay::Range {
                    min_ns: 5_000_000,
                    max_ns: 5_000_000
                },
                packets: 3,
                bytes: 0
            })
        );
        assert_eq!(
            ok("slot distribution normal 10ms 2ms bytes 1500 limit 5").slot,
            Some(Slot {
                delay: SlotDelay::Table {
                    distribution: Distribution::Normal,
                    delay_ns: 10_000_000,
                    jitter_ns: 2_000_000
                },
                packets: 0,
                bytes: 1500
            })
        );
        assert!(err("slot 20ms 10ms").contains("below its minimum"));
        assert!(err("slot fast").contains("\"fast\" after \"slot\""));
        assert!(err("slot distribution uniform 1ms 1ms").contains("has no table"));
        assert!(err("slot distribution normal 1ms 0ms").contains("jitter above 0"));
        assert!(err("slot 1ms packets 0").contains("\"0\" is not a positive count"));
        assert!(err("slot").contains("\"slot\" needs a value"));
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "delay 10ms",
            "delay 10ms 1ms",
            "delay 100ms 20ms 25% distribution paretonormal",
            "delay 5ms 0us 30%",
            "loss state 1% 30% 10% 50% 0.5%",
            "loss gemodel 1% 20% 70% 0.1%",
            "loss random 5% 25%",
            "corrupt 0.1% duplicate 3% 1%",
            "delay 1ms reorder 25% 50% gap 5",
            "rate 10mbit 20 53 5 limit 100 seed 42",
            "rate 1234568bit -4",
            "delay 1500ns",
            "slot 10ms 20ms packets 4 bytes 6000",
            "slot distribution pareto 5ms 1ms",
            "delay 1ms slot 0us 0us bytes 100",
        ] {
            let spec = ok(s);
            assert_eq!(spec.to_string(), s, "canonical form of {s:?}");
            assert_eq!(ok(&spec.to_string()), spec);
        }
    }
}
