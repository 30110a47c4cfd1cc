//! The netem statistics report for BENCHMARKS.md: measured fractions, burst lengths
//! and KS statistics over 100k simulated packets, against theory. Run with
//! `cargo test --release --manifest-path harness/linkemu/Cargo.toml --test netem_report -- --ignored --nocapture`.
//! (The assertions live in the other netem_* tests; this only prints.)

mod common;
use common::*;
use linkemu::dist::normal_cdf;
use linkemu::link::{Fate, Link, Verdict};

const N: usize = 100_000;
const SEED: u64 = 2026;

fn verdicts(s: &str) -> Vec<Verdict> {
    run(&mut Link::new(spec(s), SEED), N, 1_000_000, 100).verdicts
}

fn fraction_row(s: &str, what: &str, p: f64, hit: fn(&Verdict) -> bool) {
    let k = verdicts(s).iter().filter(|v| hit(v)).count();
    let half = Z999 * (N as f64 * p * (1.0 - p)).sqrt() / N as f64;
    let f = k as f64 / N as f64;
    let ok = (f - p).abs() <= half;
    println!(
        "| `{s}` | {what} | {:.3}% | {:.3}% ± {:.3}% | {} |",
        100.0 * f,
        100.0 * p,
        100.0 * half,
        yes(ok)
    );
}

fn markov_row(s: &str, chain: (Vec<Vec<f64>>, Vec<f64>)) {
    let lost: Vec<bool> = verdicts(s).iter().map(|v| v.original == Fate::Lost).collect();
    let (mean, var, burst) = markov_loss(&chain.0, &chain.1);
    let f = lost.iter().filter(|&&l| l).count() as f64 / N as f64;
    let f_half = Z999 * (var / N as f64).sqrt();
    let bursts: Vec<f64> = loss_bursts(lost.into_iter()).into_iter().map(|b| b as f64).collect();
    let (m, sd) = mean_and_sd(&bursts);
    let b_half = Z999 * sd / (bursts.len() as f64).sqrt();
    println!(
        "| `{s}` | {:.3}% | {:.3}% ± {:.3}% | {:.3} | {:.3} ± {:.3} | {} |",
        100.0 * f,
        100.0 * mean,
        100.0 * f_half,
        m,
        burst,
        b_half,
        yes((f - mean).abs() <= f_half && (m - burst).abs() <= b_half)
    );
}

fn ks_row(dist: &str, cdf: fn(f64) -> f64) {
    let s = format!("delay 100ms 20ms{dist}");
    let r = run(&mut Link::new(spec(&s), SEED), N, 1_000_000, 100);
    let mut xs: Vec<f64> = r
        .departures
        .iter()
        .map(|d| ((d.due - d.arrived) as f64 - 100e6) / 20e6)
        .collect();
    let d = ks_statistic(&mut xs, cdf);
    let crit = ks_critical(N, 0.001);
    println!("| `{s}` | {d:.5} | {crit:.5} | {} |", yes(d < crit));
}

fn yes(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "**no**"
    }
}

#[test]
#[ignore = "prints the BENCHMARKS.md tables; run with --ignored --nocapture"]
fn netem_statistics_report() {
    println!("\nImpairment fractions ({N} packets, seed {SEED}; bound: 99.9% binomial)\n");
    println!("| spec | counted | measured | expected | within |\n|---|---|---|---|---|");
    fraction_row("loss 5%", "lost", 0.05, |v| v.original == Fate::Lost);
    fraction_row("loss 28%", "lost", 0.28, |v| v.original == Fate::Lost);
    fraction_row("duplicate 10%", "duplicated", 0.10, |v| v.duplicate.is_some());
    fraction_row("corrupt 5%", "corrupted", 0.05, |v| {
        matches!(v.original, Fate::Queued { corrupted: true, .. })
    });
    fraction_row("delay 10ms reorder 25%", "reordered", 0.25, |v| {
        matches!(v.original, Fate::Queued { reordered: true, .. })
    });
    fraction_row(
        "delay 10ms reorder 50% gap 5",
        "reordered (theory 1/6)",
        1.0 / 6.0,
        |v| matches!(v.original, Fate::Queued { reordered: true, .. }),
    );

    println!(
        "\nBurst-loss models ({N} packets; bounds: 99.9% from the chain's asymptotic variance / the bursts' spread)\n"
    );
    println!("| spec | loss | theory | mean burst | theory | within |\n|---|---|---|---|---|---|");
    markov_row("loss gemodel 1% 30%", ge_chain(0.01, 0.30, 1.0, 0.0));
    markov_row("loss gemodel 2% 20% 60% 1%", ge_chain(0.02, 0.20, 0.60, 0.01));
    markov_row(
        "loss state 1% 30% 10% 20% 0.5%",
        four_state_chain(0.01, 0.30, 0.10, 0.20, 0.005),
    );
    markov_row(
        "loss state 0% 100% 0% 0% 10%",
        four_state_chain(0.0, 1.0, 0.0, 0.0, 0.10),
    );

    println!("\nJitter against its distribution ({N} packets; Kolmogorov-Smirnov, alpha = 0.001)\n");
    println!("| spec | D | critical | accepted |\n|---|---|---|---|");
    ks_row("", uniform_cdf);
    ks_row(" distribution normal", normal_cdf);
    ks_row(" distribution pareto", pareto_cdf);
    ks_row(" distribution paretonormal", paretonormal_cdf);

    // Slots: gaps between slot openings, one packet per slot, 10k packets queued at once.
    let mut l = Link::new(spec("slot 5ms 15ms packets 1 limit 10001"), SEED);
    for i in 0..10_001u64 {
        l.enqueue(0, i.to_be_bytes().to_vec(), 0..0, 0);
    }
    let out = drain(&mut l);
    let mut gaps: Vec<f64> = out.windows(2).map(|w| (w[1].0 - w[0].0) as f64 / 1e6).collect();
    let n = gaps.len();
    let d = ks_statistic(&mut gaps, |g| ((g - 5.0) / 10.0).clamp(0.0, 1.0));
    let crit = ks_critical(n, 0.001);
    println!(
        "| `slot 5ms 15ms packets 1` (gaps between slots, {n}, uniform 5-15 ms) | {d:.5} | {crit:.5} | {} |",
        yes(d < crit)
    );

    let mut l = Link::new(spec("rate 10mbit limit 100"), SEED);
    let r = run(&mut l, N, 500_000, 1000);
    let out = &r.departures;
    let rate = (out.len() - 1) as f64 * 8000.0 / ((out.last().unwrap().due - out[0].due) as f64 / 1e9);
    let exact = out.windows(2).all(|w| w[1].due - w[0].due == 800_000);
    println!(
        "\nRate: `rate 10mbit limit 100`, 1000-byte packets offered every 500 µs: {} delivered, \
         rate {:.6} Mbit/s, every gap exactly 800 µs: {}\n",
        out.len(),
        rate / 1e6,
        yes(exact)
    );

    // The pipeline's own cost per packet (enqueue + dequeue), so the I/O side knows
    // it is not the bottleneck. Wall-clock, so only printed, never asserted.
    for spec_text in [
        "",
        "delay 10ms rate 100mbit loss 1%",
        "delay 10ms 2ms distribution normal loss gemodel 1% 30% duplicate 1% corrupt 1% rate 1gbit",
    ] {
        let mut l = Link::new(spec(spec_text), SEED);
        let n = 1_000_000u64;
        let payload = vec![0u8; 1000];
        let start = std::time::Instant::now();
        let mut out = 0u64;
        for i in 0..n {
            let now = i * 10_000;
            l.enqueue(now, payload.clone(), 0..1000, 0);
            while l.dequeue(now).is_some() {
                out += 1;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!("Pipeline cost, `{spec_text}`: {:.0} ns per packet ({:.2} M packets/s, {out} out, 1000-byte copies included)", secs * 1e9 / n as f64, n as f64 / secs / 1e6);
    }
}
