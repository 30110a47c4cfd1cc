//! Shared pieces of the netem tests: driving a Link with simulated arrivals, and
//! the statistics the checks need (binomial bounds, Kolmogorov-Smirnov, Markov chains).
#![allow(dead_code)]

use linkemu::dist::normal_cdf;
use linkemu::link::{Departure, Link, Verdict};
use linkemu::spec::NetemSpec;

/// z for a two-sided 99.9% interval.
pub const Z999: f64 = 3.290_527;

pub fn spec(s: &str) -> NetemSpec {
    NetemSpec::parse(s).unwrap_or_else(|e| panic!("{e}"))
}

/// Arrivals `interval_ns` apart, packets of `size` bytes whose first 8 bytes number
/// them; what is due is drained as time goes on, the rest at the end.
pub struct Run {
    pub verdicts: Vec<Verdict>,
    pub departures: Vec<Departure>,
}

pub fn run(link: &mut Link, n: usize, interval_ns: u64, size: usize) -> Run {
    let mut verdicts = Vec::with_capacity(n);
    let mut departures = Vec::new();
    for i in 0..n {
        let now = i as u64 * interval_ns;
        while let Some(d) = link.dequeue(now) {
            departures.push(d);
        }
        let mut data = vec![0u8; size.max(8)];
        data[..8].copy_from_slice(&(i as u64).to_be_bytes());
        let len = data.len();
        verdicts.push(link.enqueue(now, data, 8..len, 0));
    }
    while let Some(d) = link.dequeue(u64::MAX) {
        departures.push(d);
    }
    Run { verdicts, departures }
}

/// Drain `link` as an event loop would: sleep until next_due, dequeue what is due.
/// Returns (release time, packet number). Fails if next_due ever points at a time where
/// nothing can leave twice in a row (an event loop would spin).
pub fn drain(link: &mut Link) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut idle_at = None;
    while let Some(t) = link.next_due() {
        match link.dequeue(t) {
            Some(d) => {
                out.push((t, packet_number(&d)));
                idle_at = None;
            }
            None => {
                assert_ne!(idle_at, Some(t), "next_due stuck at {t}");
                idle_at = Some(t);
            }
        }
    }
    out
}

pub fn packet_number(d: &Departure) -> u64 {
    u64::from_be_bytes(d.data[..8].try_into().unwrap())
}

/// `k` successes in `n` trials is within the 99.9% binomial interval around `p`.
pub fn assert_binomial(what: &str, k: usize, n: usize, p: f64) {
    assert_within(what, k as f64, n as f64 * p, n as f64 * p * (1.0 - p));
}

/// `observed` is within 99.9% (normal approximation) of `mean` given `variance`.
pub fn assert_within(what: &str, observed: f64, mean: f64, variance: f64) {
    // (plus float slack, for theory that is exact and samples with no spread)
    let bound = Z999 * variance.sqrt() + 1e-9 * mean.abs().max(1.0);
    assert!(
        (observed - mean).abs() <= bound,
        "{what}: observed {observed:.1}, expected {mean:.1} ± {bound:.1} (99.9%)"
    );
}

/// The Kolmogorov-Smirnov statistic sup|F_n - F| of `samples` against `cdf`. Samples
/// may repeat (table distributions are discrete), so both sides of each step count,
/// with `cdf(v - eps)` standing for F's left limit.
pub fn ks_statistic(samples: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = samples.len() as f64;
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < samples.len() {
        let v = samples[i];
        let mut j = i;
        while j < samples.len() && samples[j] == v {
            j += 1;
        }
        let below = i as f64 / n; // F_n(v-)
        let upto = j as f64 / n; // F_n(v)
        let eps = 1e-6 * v.abs().max(1.0);
        d = d.max((upto - cdf(v)).abs()).max((below - cdf(v - eps)).abs());
        i = j;
    }
    d
}

/// The KS critical value at level `alpha` for `n` samples (asymptotic).
pub fn ks_critical(n: usize, alpha: f64) -> f64 {
    (-(alpha / 2.0).ln() / 2.0).sqrt() / (n as f64).sqrt()
}

/// A Markov chain with transition matrix `p` where a packet in state i is lost with
/// probability `f[i]`, independently given the state. Returns (loss fraction,
/// asymptotic variance of the loss count per packet, mean loss-burst length).
pub fn markov_loss(p: &[Vec<f64>], f: &[f64]) -> (f64, f64, f64) {
    let n = p.len();
    // Stationary distribution reached from state 0 (where netem starts), by power
    // iteration of the lazy chain (I + P)/2: same fixed point, never periodic.
    let mut pi = vec![0.0; n];
    pi[0] = 1.0;
    for _ in 0..100_000 {
        let mut next: Vec<f64> = pi.iter().map(|x| x / 2.0).collect();
        for i in 0..n {
            for j in 0..n {
                next[j] += pi[i] * p[i][j] / 2.0;
            }
        }
        pi = next;
    }
    let mean: f64 = (0..n).map(|i| pi[i] * f[i]).sum();
    // σ² = m(1-m) + 2 Σ_k Cov(L_0, L_k), with Cov from E[f(X_0) f(X_k)] = Σ π_i f_i (P^k f)_i.
    let mut var = mean * (1.0 - mean);
    let mut pkf = f.to_vec();
    for _ in 0..100_000 {
        pkf = (0..n).map(|i| (0..n).map(|j| p[i][j] * pkf[j]).sum()).collect();
        let cov: f64 = (0..n).map(|i| pi[i] * f[i] * pkf[i]).sum::<f64>() - mean * mean;
        var += 2.0 * cov;
        if cov.abs() < 1e-15 {
            break;
        }
    }
    // A burst starts where a delivered packet is followed by a lost one.
    let starts: f64 = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| pi[i] * (1.0 - f[i]) * p[i][j] * f[j])
        .sum();
    (mean, var, mean / starts)
}

/// Lengths of the runs of consecutive lost originals.
pub fn loss_bursts(lost: impl Iterator<Item = bool>) -> Vec<usize> {
    let mut bursts = Vec::new();
    let mut run = 0;
    for l in lost {
        if l {
            run += 1;
        } else if run > 0 {
            bursts.push(run);
            run = 0;
        }
    }
    if run > 0 {
        bursts.push(run);
    }
    bursts
}

pub fn mean_and_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, v.sqrt())
}

// ---- theory: jitter distributions, in units of σ ----

/// iproute2's tables cap values at i16::MAX in units of σ/8192.
pub const TABLE_MAX_SIGMAS: f64 = 32767.0 / 8192.0;

/// Pareto (α = 3, x_m = 1) centred on its mean 1.5 and scaled by 4/3, as pareto.c.
pub fn pareto_quantile(q: f64) -> f64 {
    ((1.0 - q).powf(-1.0 / 3.0) - 1.5) * 4.0 / 3.0
}

pub fn pareto_cdf(z: f64) -> f64 {
    // Capped entries come back within a nanosecond's rounding (5e-8 σ here) of the cap.
    if z >= TABLE_MAX_SIGMAS - 5e-8 {
        1.0
    } else if z <= -2.0 / 3.0 {
        0.0
    } else {
        1.0 - (1.5 + 0.75 * z).powi(-3)
    }
}

pub fn normal_quantile(q: f64) -> f64 {
    bisect(|x| normal_cdf(x) - q, -12.0, 12.0)
}

/// paretonormal.c: (normal + 3·pareto)/4 of the same quantile, pareto capped.
pub fn paretonormal_cdf(z: f64) -> f64 {
    let g = |q: f64| (normal_quantile(q) + 3.0 * pareto_quantile(q).min(TABLE_MAX_SIGMAS)) / 4.0;
    if z < g(1e-12) {
        return 0.0;
    }
    if z >= g(1.0 - 1e-12) {
        return 1.0;
    }
    bisect(|q| g(q) - z, 1e-12, 1.0 - 1e-12)
}

pub fn bisect(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid
        } else {
            hi = mid
        }
    }
    0.5 * (lo + hi)
}

/// netem's default jitter: uniform on [-1, 1).
pub fn uniform_cdf(z: f64) -> f64 {
    ((z + 1.0) / 2.0).clamp(0.0, 1.0)
}

// ---- theory: loss models as Markov chains ----

/// Gilbert-Elliott's chain: states good, bad; lost with 1-k in good, 1-h in bad.
pub fn ge_chain(p: f64, r: f64, one_minus_h: f64, one_minus_k: f64) -> (Vec<Vec<f64>>, Vec<f64>) {
    (vec![vec![1.0 - p, p], vec![r, 1.0 - r]], vec![one_minus_k, one_minus_h])
}

/// netem's 4-state chain (states 1..4 as indices 0..3; 3 and 4 lose).
pub fn four_state_chain(p13: f64, p31: f64, p32: f64, p23: f64, p14: f64) -> (Vec<Vec<f64>>, Vec<f64>) {
    (
        vec![
            vec![1.0 - p13 - p14, 0.0, p13, p14],
            vec![0.0, 1.0 - p23, p23, 0.0],
            vec![p31, p32, 1.0 - p31 - p32, 0.0],
            vec![1.0, 0.0, 0.0, 0.0],
        ],
        vec![0.0, 0.0, 1.0, 1.0],
    )
}
