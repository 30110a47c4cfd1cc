//! Delay and jitter: constant delay is exact, and the jitter of each distribution
//! matches its theoretical CDF (Kolmogorov-Smirnov at alpha = 0.001, fixed seeds).

mod common;
use common::*;
use linkemu::dist::normal_cdf;
use linkemu::link::Link;

const N: usize = 100_000;
const MS: u64 = 1_000_000;
const ALPHA: f64 = 0.001;

/// Standardised jitter (delay - μ)/σ of `n` packets through `s`.
fn jitter_samples(s: &str, seed: u64, mu: f64, sigma: f64) -> Vec<f64> {
    let mut link = Link::new(spec(s), seed);
    let r = run(&mut link, N, MS, 10);
    assert_eq!(r.departures.len(), N);
    r.departures
        .iter()
        .map(|d| ((d.due - d.arrived) as f64 - mu) / sigma)
        .collect()
}

fn assert_ks(what: &str, mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    let d = ks_statistic(&mut xs, cdf);
    let crit = ks_critical(xs.len(), ALPHA);
    assert!(d < crit, "{what}: KS D = {d:.5} >= critical {crit:.5}");
    d
}

#[test]
fn constant_delay_is_exact_and_keeps_order() {
    let mut link = Link::new(spec("delay 10ms"), 1);
    let r = run(&mut link, 10_000, 100_000, 10);
    assert!(r.departures.iter().all(|d| d.due - d.arrived == 10 * MS));
    assert!(r
        .departures
        .iter()
        .enumerate()
        .all(|(i, d)| packet_number(d) == i as u64));
}

#[test]
fn uniform_jitter_is_uniform() {
    // netem's default: delay ± jitter, uniform.
    let xs = jitter_samples("delay 100ms 20ms", 2, 100e6, 20e6);
    assert!(xs.iter().all(|&z| (-1.0..1.0).contains(&z)));
    assert_ks("uniform", xs, uniform_cdf);
}

#[test]
fn normal_jitter_is_normal() {
    let xs = jitter_samples("delay 100ms 20ms distribution normal", 3, 100e6, 20e6);
    assert_ks("normal", xs, normal_cdf);
}

#[test]
fn pareto_jitter_is_pareto() {
    let xs = jitter_samples("delay 100ms 20ms distribution pareto", 4, 100e6, 20e6);
    assert_ks("pareto", xs, pareto_cdf);
}

#[test]
fn paretonormal_jitter_is_paretonormal() {
    let xs = jitter_samples("delay 100ms 20ms distribution paretonormal", 5, 100e6, 20e6);
    assert_ks("paretonormal", xs, paretonormal_cdf);
}

#[test]
fn ks_rejects_the_wrong_distribution() {
    // The test has teeth: normal jitter is not uniform, pareto is not normal.
    let mut xs = jitter_samples("delay 100ms 20ms distribution normal", 6, 100e6, 20e6);
    let d = ks_statistic(&mut xs, uniform_cdf);
    assert!(d > 10.0 * ks_critical(N, ALPHA));
    let mut xs = jitter_samples("delay 100ms 20ms distribution pareto", 7, 100e6, 20e6);
    let d = ks_statistic(&mut xs, normal_cdf);
    assert!(d > 10.0 * ks_critical(N, ALPHA));
}

#[test]
fn jitter_without_rate_reorders_packets() {
    // As netem: packets leave in due-time order, so jitter larger than the spacing reorders.
    let mut link = Link::new(spec("delay 10ms 5ms"), 8);
    let r = run(&mut link, 10_000, 100_000, 10);
    let out_of_order = r
        .departures
        .windows(2)
        .filter(|w| packet_number(&w[1]) < packet_number(&w[0]))
        .count();
    assert!(out_of_order > 1000);
    assert!(r.departures.windows(2).all(|w| w[0].due <= w[1].due));
}

#[test]
fn delay_correlation_is_as_weak_as_netems() {
    // netem feeds its correlated 32-bit random number through `rnd % (2σ)` (uniform)
    // or `rnd % 4096` (tables); the modulo keeps only low bits, which carry almost
    // none of the correlation. We reproduce that: with 90% correlation the jitter
    // is still uniform, and successive delays are barely closer than independent ones.
    let xs = jitter_samples("delay 100ms 20ms 90%", 10, 100e6, 20e6);
    let mean_step = |v: &[f64]| v.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f64>() / v.len() as f64;
    let by_arrival = |s: &str| {
        let mut link = Link::new(spec(s), 10);
        let r = run(&mut link, 20_000, 10 * MS, 10);
        let mut v: Vec<(u64, f64)> = r
            .departures
            .iter()
            .map(|d| (d.arrived, (d.due - d.arrived) as f64))
            .collect();
        v.sort_by_key(|p| p.0);
        v.into_iter().map(|p| p.1).collect::<Vec<f64>>()
    };
    let independent = mean_step(&by_arrival("delay 100ms 20ms"));
    let correlated = mean_step(&by_arrival("delay 100ms 20ms 90%"));
    assert!(correlated > 0.9 * independent, "{correlated} vs {independent}");
    assert_ks("uniform, 90% correlated", xs, uniform_cdf);
}

#[test]
fn jitter_beyond_the_delay_sends_at_once_never_before_arrival() {
    // delay 1ms ± 10ms: draws below -1ms (9 in 20) are negative; netem sends those at once.
    let mut link = Link::new(spec("delay 1ms 10ms"), 11);
    let r = run(&mut link, 10_000, MS, 10);
    assert!(r
        .departures
        .iter()
        .all(|d| d.due >= d.arrived && d.due - d.arrived <= 11 * MS));
    let at_once = r.departures.iter().filter(|d| d.due == d.arrived).count();
    assert_binomial("sent at once", at_once, 10_000, 0.45);
}
