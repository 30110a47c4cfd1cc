//! Delay jitter: netem's `tabledist`, with the uniform default and the normal,
//! pareto and paretonormal tables that iproute2 ships (`netem/normal.c`,
//! `pareto.c`, `paretonormal.c`), generated here the same way at first use.
//!
//! Correlation (`delay 100ms 20ms 25%`) feeds netem's correlated random number into
//! `rnd % 2σ` or `rnd % 4096`, which keeps only its low bits, where almost none of
//! the correlation lives: as in netem, delay correlation has next to no effect.
//!
//! A table holds 4096 samples of the distribution's inverse CDF in units of
//! σ / NETEM_DIST_SCALE, so a table entry `t` means a delay of μ + σ·t/8192.

use crate::spec::Distribution;
use std::sync::OnceLock;

/// netem's fixed-point scale for distribution tables.
pub const NETEM_DIST_SCALE: i64 = 8192;
/// Entries per table, as iproute2 generates them.
pub const TABLE_SIZE: usize = 4096;
/// iproute2 computes each table at 4x resolution and keeps every 4th value.
const FINE_SIZE: usize = 4 * TABLE_SIZE;
/// Shape of iproute2's pareto table.
const PARETO_ALPHA: f64 = 3.0;

pub type Table = [i16; TABLE_SIZE];

/// The table for a distribution, or None for netem's default uniform jitter.
pub fn table(dist: Distribution) -> Option<&'static Table> {
    static NORMAL: OnceLock<Box<Table>> = OnceLock::new();
    static PARETO: OnceLock<Box<Table>> = OnceLock::new();
    static PARETONORMAL: OnceLock<Box<Table>> = OnceLock::new();
    match dist {
        Distribution::Uniform => None,
        Distribution::Normal => Some(NORMAL.get_or_init(|| build(|j, fine| clamp16(fine[4 * j])))),
        Distribution::Pareto => Some(PARETO.get_or_init(|| build(|j, _| pareto_value(j)))),
        Distribution::ParetoNormal => Some(PARETONORMAL.get_or_init(|| {
            // C integer division (toward zero), as paretonormal.c does.
            build(|j, fine| clamp16((fine[4 * j] + 3 * pareto_value(j) as i64) / 4))
        })),
    }
}

fn build(entry: impl Fn(usize, &[i64]) -> i16) -> Box<Table> {
    let fine = normal_fine_table();
    let mut t = Box::new([0i16; TABLE_SIZE]);
    for (j, v) in t.iter_mut().enumerate() {
        *v = entry(j, &fine);
    }
    t
}

fn clamp16(v: i64) -> i16 {
    v.clamp(i16::MIN as i64, i16::MAX as i64) as i16
}

/// normal.c: scan x over [-10, 10] in steps of 5e-5 and file each x under
/// rint(16384·Φ(x)); the last (largest) x filed under i is the i-th quantile.
/// Returned scaled by NETEM_DIST_SCALE and rounded, unclamped.
fn normal_fine_table() -> Vec<i64> {
    let mut fine = vec![0f64; FINE_SIZE + 1];
    let steps = (20.05 / 0.00005) as usize;
    for k in 0..=steps {
        let x = -10.0 + k as f64 * 0.00005;
        let i = (FINE_SIZE as f64 * normal_cdf(x)).round() as usize;
        fine[i] = x;
    }
    fine.iter()
        .map(|x| (x * NETEM_DIST_SCALE as f64).round() as i64)
        .collect()
}

/// pareto.c: entry j is the pareto(α=3, x_m=1) quantile at u = 1 - j/4096, centred on
/// its mean 1.5 and scaled by 4/3, capped at i16::MAX.
fn pareto_value(j: usize) -> i16 {
    let u = (65536 - 16 * j) as f64 / 65536.0;
    let v = (1.0 / u.powf(1.0 / PARETO_ALPHA) - 1.5) * (4.0 / 3.0) * NETEM_DIST_SCALE as f64;
    v.min(i16::MAX as f64).round() as i16
}

/// netem's `tabledist`: μ + jitter drawn from `rnd` (a 32-bit, possibly correlated,
/// random number). Uniform: μ - σ + (rnd mod 2σ). Table: μ + σ·t/8192, rounded
/// half away from zero exactly as netem's fixed-point arithmetic does.
pub fn tabledist(mu: i64, sigma: i64, rnd: u32, table: Option<&Table>) -> i64 {
    if sigma == 0 {
        return mu;
    }
    match table {
        // netem caps σ at i32::MAX, so 2σ fits in u32.
        None => mu - sigma + (rnd as i64 % (2 * sigma)),
        Some(table) => {
            let t = table[rnd as usize % TABLE_SIZE] as i64;
            let mut x = (sigma % NETEM_DIST_SCALE) * t;
            x += if x >= 0 {
                NETEM_DIST_SCALE / 2
            } else {
                -NETEM_DIST_SCALE / 2
            };
            x / NETEM_DIST_SCALE + (sigma / NETEM_DIST_SCALE) * t + mu
        }
    }
}

/// Φ(x), the standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function: the Chebyshev fit of Numerical Recipes' `erfcc`,
/// fractional error < 1.2e-7, far finer than a 16-bit table needs.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_centred() {
        for d in [Distribution::Normal, Distribution::Pareto, Distribution::ParetoNormal] {
            let t = table(d).unwrap();
            assert!(t.windows(2).all(|w| w[0] <= w[1]), "{d:?} not sorted");
            let mean: f64 = t.iter().map(|&v| v as f64).sum::<f64>() / TABLE_SIZE as f64;
            // Mean of each is ~0 in table units (pareto is centred on its mean, minus the cap).
            assert!(mean.abs() < 0.05 * NETEM_DIST_SCALE as f64, "{d:?} mean {mean}");
        }
    }

    #[test]
    fn normal_table_has_unit_sigma() {
        let t = table(Distribution::Normal).unwrap();
        let var: f64 = t.iter().map(|&v| (v as f64 / 8192.0).powi(2)).sum::<f64>() / TABLE_SIZE as f64;
        assert!((var.sqrt() - 1.0).abs() < 0.01, "sigma {}", var.sqrt());
        // Median entry is the median: Φ^-1(0.5) = 0.
        assert!(t[TABLE_SIZE / 2].abs() <= 8);
    }

    #[test]
    fn erfc_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
    }

    #[test]
    fn tabledist_scales_by_sigma() {
        let t = table(Distribution::Normal).unwrap();
        // rnd picks entry rnd % 4096; σ = 8192 ns gives back the entry itself.
        let idx = 3000u32;
        assert_eq!(tabledist(100_000, 8192, idx, Some(t)), 100_000 + t[idx as usize] as i64);
        assert_eq!(tabledist(5, 0, 123, Some(t)), 5);
        // Uniform: μ - σ + rnd mod 2σ.
        assert_eq!(tabledist(1000, 10, 25, None), 1000 - 10 + 5);
    }
}
