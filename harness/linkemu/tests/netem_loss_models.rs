//! Gilbert-Elliott (`loss gemodel`) and netem's 4-state model (`loss state`): loss
//! fraction and mean burst length against the theory of their Markov chains.

mod common;
use common::*;
use linkemu::link::{Fate, Link};

const N: usize = 100_000;

/// Loss pattern of the originals for `n` packets.
fn losses(s: &str, seed: u64, n: usize) -> Vec<bool> {
    let mut link = Link::new(spec(s), seed);
    run(&mut link, n, 10_000, 10)
        .verdicts
        .iter()
        .map(|v| v.original == Fate::Lost)
        .collect()
}

/// Check loss fraction (against the chain's asymptotic variance) and mean burst length
/// (sample mean of the observed bursts, 99.9% normal bound from their spread).
fn check(what: &str, lost: &[bool], chain: &[Vec<f64>], f: &[f64]) {
    let (mean, var, burst) = markov_loss(chain, f);
    let n = lost.len();
    let k = lost.iter().filter(|&&l| l).count();
    assert_within(
        &format!("{what}: lost packets"),
        k as f64,
        n as f64 * mean,
        n as f64 * var,
    );
    let bursts: Vec<f64> = loss_bursts(lost.iter().copied())
        .into_iter()
        .map(|b| b as f64)
        .collect();
    let (m, sd) = mean_and_sd(&bursts);
    assert_within(&format!("{what}: mean burst"), m, burst, sd * sd / bursts.len() as f64);
}

#[test]
fn simple_gilbert_bursts_last_1_over_r() {
    // 1-h = 100% (every packet lost in bad), 1-k = 0: bursts are bad sojourns, mean 1/r.
    let lost = losses("loss gemodel 1% 30%", 1, N);
    let (chain, f) = ge_chain(0.01, 0.30, 1.0, 0.0);
    let (mean, _, burst) = markov_loss(&chain, &f);
    assert!(
        (mean - 0.01 / 0.31).abs() < 1e-9 && (burst - 1.0 / 0.3).abs() < 1e-9,
        "theory helper"
    );
    check("gemodel 1% 30%", &lost, &chain, &f);
}

#[test]
fn gilbert_elliott_with_h_and_k() {
    let lost = losses("loss gemodel 2% 20% 60% 1%", 2, N);
    let (chain, f) = ge_chain(0.02, 0.20, 0.60, 0.01);
    check("gemodel 2% 20% 60% 1%", &lost, &chain, &f);
}

#[test]
fn gemodel_defaults_to_simple_gilbert_with_r_100() {
    // "loss gemodel p" alone: r = 100%, all lost in bad, none in good: isolated losses at rate p/(1+p).
    let lost = losses("loss gemodel 5%", 3, N);
    let (chain, f) = ge_chain(0.05, 1.0, 1.0, 0.0);
    check("gemodel 5%", &lost, &chain, &f);
    assert!(loss_bursts(lost.into_iter()).iter().all(|&b| b == 1));
}

#[test]
fn four_state_full_model() {
    let lost = losses("loss state 1% 30% 10% 20% 0.5%", 4, N);
    let (chain, f) = four_state_chain(0.01, 0.30, 0.10, 0.20, 0.005);
    check("state 1% 30% 10% 20% 0.5%", &lost, &chain, &f);
}

#[test]
fn four_state_defaults_are_bernoulli() {
    // "loss state p13" alone: p31 = 1 - p13, so it loses independently with p13.
    let lost = losses("loss state 5%", 5, N);
    let k = lost.iter().filter(|&&l| l).count();
    assert_binomial("state 5%", k, N, 0.05);
    let (chain, f) = four_state_chain(0.05, 0.95, 0.0, 1.0, 0.0);
    check("state 5%", &lost, &chain, &f);
}

#[test]
fn four_state_isolated_losses_only() {
    // Only p14: every loss is an isolated one (state 4), followed by a delivered packet.
    let lost = losses("loss state 0% 100% 0% 0% 10%", 6, N);
    assert!(loss_bursts(lost.iter().copied()).iter().all(|&b| b == 1));
    let (chain, f) = four_state_chain(0.0, 1.0, 0.0, 0.0, 0.10);
    let (mean, _, _) = markov_loss(&chain, &f);
    assert!((mean - 0.1 / 1.1).abs() < 1e-9, "theory helper: {mean}");
    check("state isolated", &lost, &chain, &f);
}
