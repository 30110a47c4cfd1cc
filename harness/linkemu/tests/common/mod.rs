//! Shared pieces of the netem tests: driving a Link with simulated arrivals, and
//! the statistics the checks need (binomial bounds, Kolmogorov-Smirnov, Markov chains).
#![allow(dead_code)]

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

pub fn packet_number(d: &Departure) -> u64 {
    u64::from_be_bytes(d.data[..8].try_into().unwrap())
}

/// `k` successes in `n` trials is within the 99.9% binomial interval around `p`.
pub fn assert_binomial(what: &str, k: usize, n: usize, p: f64) {
    assert_within(what, k as f64, n as f64 * p, n as f64 * p * (1.0 - p));
}

/// `observed` is within 99.9% (normal approximation) of `mean` given `variance`.
pub fn assert_within(what: &str, observed: f64, mean: f64, variance: f64) {
    let bound = Z999 * variance.sqrt();
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
    // Stationary distribution by power iteration.
    let mut pi = vec![1.0 / n as f64; n];
    for _ in 0..100_000 {
        let mut next = vec![0.0; n];
        for i in 0..n {
            for j in 0..n {
                next[j] += pi[i] * p[i][j];
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
