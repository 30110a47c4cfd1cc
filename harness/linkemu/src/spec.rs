//! tc-netem's option syntax, parsed from one string into a [`NetemSpec`].
//!
//! Follows iproute2's `tc/q_netem.c`: keywords may be abbreviated as `tc` allows,
//! times without a unit are microseconds, percentages may omit the `%`, rates
//! without a unit are bit/s, and optional numbers after a keyword are taken
//! only when the next token looks like a number.

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
    State { p13: Percent, p31: Percent, p32: Percent, p23: Percent, p14: Percent },
    /// `loss gemodel p [r [1-h [1-k]]]`: Gilbert-Elliott.
    GilbertElliott { p: Percent, r: Percent, one_minus_h: Percent, one_minus_k: Percent },
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
        if spec.trim().is_empty() {
            return Ok(NetemSpec::default());
        }
        Err(SpecError { spec: spec.to_string(), message: "not implemented yet".into() })
    }
}

impl fmt::Display for NetemSpec {
    fn fmt(&self, _f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}
